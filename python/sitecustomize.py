"""gpuprof trace --torch-trace: PyTorch's operators as marker ranges (gpuprof_torch.py)
once the program imports torch; then the sitecustomize this one stands in front of, if
there is one further on the path."""
import os
import sys


def _gpuprof_next_sitecustomize():
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    import importlib.util
    path = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec and spec.loader:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def _gpuprof_watch_torch():
    import importlib.abc

    class Finder(importlib.abc.MetaPathFinder):
        """Installs the hooks right after torch's own import finished."""

        def find_spec(self, name, path, target=None):
            if name != "torch":
                return None
            sys.meta_path.remove(self)
            import importlib.util
            spec = importlib.util.find_spec(name)
            if spec is None or spec.loader is None:
                return spec
            execute = spec.loader.exec_module

            def exec_module(module):
                execute(module)
                import gpuprof_torch
                reason = gpuprof_torch.install(module)
                if reason:
                    sys.stderr.write(f"gpuprof: --torch-trace: no operator ranges: {reason}\n")
            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, Finder())


def _gpuprof_note_without_torch():
    """At exit, a line when the program never imported torch: nothing to map."""
    if "torch" not in sys.modules:
        try:
            sys.stderr.write("gpuprof: --torch-trace: this Python program did not import "
                             "torch: no operator ranges\n")
        except Exception:
            pass


if os.environ.get("GPUPROF_TORCH_TRACE") == "1":
    try:
        _gpuprof_watch_torch()
        import atexit
        atexit.register(_gpuprof_note_without_torch)
    except Exception as e:  # the program runs, unannotated
        sys.stderr.write(f"gpuprof: --torch-trace: {e}\n")
try:
    _gpuprof_next_sitecustomize()
except Exception:
    pass

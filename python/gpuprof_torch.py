"""PyTorch operators as gpuprof marker ranges (gpuprof trace --torch-trace).

Installed by gpuprof's sitecustomize once the program imports torch. Each operator is a
range in the domain "torch", named by the operators open on its thread, outermost
first, as rocprof-compute's operator mapping names them (a module by its class):

    nn.Module.Net.forward                                           module path Net
    nn.Module.Net.forward/nn.Module.Linear.forward                  Net.fc1
    nn.Module.Net.forward/nn.Module.Linear.forward/torch.nn.functional.linear   Net.fc1
    nn.Module.Net.forward/torch.nn.functional.relu                  Net
    torch.autograd.backward
    torch.autograd.backward/nn.Module.Linear.backward               Net.fc2
    torch.optim.SGD.zero_grad
    torch.optim.SGD.step

Beside its name each range keeps a module path (the markers' module_path): the module's
path in the model as named_modules() gives it, after the class of the outermost module
called (Net.fc1, Net.fc2: two Linear layers apart; a module called outside any model it
belongs to, its class), and for an operator inside a module, that module's. A module's
forward call (torch's
global forward hooks), a call of a torch.nn.functional function (wrapped, the builtin
ones such as linear and conv1d included), an optimizer's step and zero_grad, and
autograd's backward pass (torch.autograd.backward, which Tensor.backward calls) each
open one; so does the backward of a module without
submodules, on whichever thread autograd runs it (on CUDA a thread of its own, where no
other range is open): the backward of the operation that made its output, through
hooks on that autograd node (not torch's full backward hooks, which wrap the module's
tensors and fail on a module that then modifies them in place). For a module of one
operation (Conv2d, BatchNorm2d, ReLU, Linear on 2-D input) that is its whole backward;
for one of several, the part of its last operation. Kernels launched inside a range are
attributed to the innermost one open on the launching thread, so a kernel's operator is
the range it ran under. Outside gpuprof (no recorder) every range costs one ctypes call
that returns at once."""
import ctypes
import functools
import threading
import types
import weakref

DOMAIN = b"torch"

_markers = None
_local = threading.local()


def _stack():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _push(name, owner, module=None):
    """Opens a range named by the ranges open on this thread and name, in module (a module
    path; None: the enclosing range's); owner closes it."""
    stack = _stack()
    path = f"{stack[-1][1]}/{name}" if stack else name
    if module is None:
        module = stack[-1][2] if stack else ""
    stack.append((owner, path, module))
    _markers.gpuprof_domain_range_push_module(DOMAIN, path.encode(), module.encode())


def _pop(owner):
    """Closes owner's range and any opened inside it and left open (an exception that
    skipped their ends); nothing when owner has none open. Only the domain's ranges are
    closed: another domain's (torch.cuda.nvtx's) stay open."""
    stack = _stack()
    for depth in range(len(stack) - 1, -1, -1):
        if stack[depth][0] is owner:
            while len(stack) > depth:
                stack.pop()
                _markers.gpuprof_domain_range_pop(DOMAIN)
            return


# each module of a model called so far: its path, "Net.fc1" (weak: a model dropped is
# forgotten)
_paths = weakref.WeakKeyDictionary()
_paths_lock = threading.Lock()


def _module_path(module):
    """The module's path in the outermost model called that holds it; when it is not
    known yet and no module range is open (the call of a model), its model's paths are
    learnt from named_modules()."""
    try:
        path = _paths.get(module)
        if path is not None:
            return path
        if not any(isinstance(entry[0], torch_module) for entry in _stack()):
            root = type(module).__name__
            with _paths_lock:
                for name, child in module.named_modules():
                    _paths.setdefault(child, f"{root}.{name}" if name else root)
            return _paths.get(module, root)
    except Exception:  # a module that cannot be walked or weakly referenced
        pass
    return type(module).__name__


torch_module = type(None)  # torch.nn.Module once installed


def _forward_pre_hook(module, inputs):
    _push(f"nn.Module.{type(module).__name__}.forward", module, _module_path(module))


def _backward_range(output, name, module):
    """A range named name, in module path module, around the backward of the autograd
    node that made output, where the node takes hooks (torch 1.13 and later); nothing
    otherwise."""
    node = getattr(output, "grad_fn", None)  # a Tensor that autograd will go through
    if node is None or not hasattr(node, "register_prehook"):
        return
    token = object()

    def begin(grad_outputs):
        try:
            _push(name, token, module)
        except Exception:  # a profiler's hook never stops the backward pass
            pass

    def end(grad_inputs, grad_outputs):
        try:
            _pop(token)
        except Exception:
            pass
    # the end first: without a beginning it closes nothing (a token with no range open)
    try:
        node.register_hook(end)
        node.register_prehook(begin)
    except Exception:  # a node that takes no hooks: no range, the program unchanged
        pass


def _forward_hook(module, inputs, output):
    _pop(module)
    if next(module.children(), None) is None:
        _backward_range(output, f"nn.Module.{type(module).__name__}.backward",
                        _module_path(module))


def _wrap(name, function, before=None):
    @functools.wraps(function)
    def operator(*args, **kwargs):
        if before is not None:
            before()
        token = object()
        _push(name, token)
        try:
            return function(*args, **kwargs)
        finally:
            _pop(token)
    operator.__gpuprof_operator__ = True
    return operator


def install(torch):
    """The hooks, once: None when installed (or already), or why they could not be."""
    global _markers
    if _markers is not None:
        return None
    try:
        markers = ctypes.CDLL("libgpuprof-markers.so.1")
        markers.gpuprof_domain_range_push_module.argtypes = [ctypes.c_char_p] * 3
        markers.gpuprof_domain_range_push_module.restype = ctypes.c_int
        markers.gpuprof_domain_range_pop.argtypes = [ctypes.c_char_p]
        markers.gpuprof_domain_range_pop.restype = ctypes.c_int
    except (OSError, AttributeError) as e:
        return f"libgpuprof-markers cannot be loaded ({e})"
    modules = torch.nn.modules.module
    if not hasattr(modules, "register_module_forward_pre_hook"):
        return f"torch {torch.__version__} has no global module hooks (1.9 and later do)"
    global torch_module
    torch_module = torch.nn.Module
    _markers = markers
    modules.register_module_forward_pre_hook(_forward_pre_hook)
    modules.register_module_forward_hook(_forward_hook)
    functional = torch.nn.functional
    for name in dir(functional):
        value = getattr(functional, name)
        # its own functions, and the operators it holds as builtins (linear from
        # torch._C._nn, conv1d from torch), not what it imported from elsewhere
        # (has_torch_function from torch._C)
        builtin = (isinstance(value, types.BuiltinFunctionType) and
                   getattr(value, "__module__", None) in ("torch", "torch._C._nn"))
        if (name.startswith("_") or not callable(value) or isinstance(value, type) or
                (not builtin and getattr(value, "__module__", None) != "torch.nn.functional") or
                getattr(value, "__gpuprof_operator__", False)):
            continue
        setattr(functional, name, _wrap(f"torch.nn.functional.{name}", value))
    _wrap_optimizers(torch)
    before_backward = None
    try:
        import gpuprof_distributed
        before_backward = gpuprof_distributed.install(torch, _push, _pop)
    except Exception as e:  # the operators still, without torch.distributed's records
        import sys
        sys.stderr.write(f"gpuprof: --torch-trace: torch.distributed is not recorded: {e}\n")
    backward = _wrap("torch.autograd.backward", torch.autograd.backward, before_backward)
    torch.autograd.backward = backward
    return None


def _wrap_optimizers(torch):
    """An optimizer's step and zero_grad as ranges, torch.optim.SGD.step: the methods of
    each optimizer class torch.optim holds, and of any subclass defined later (through
    __init_subclass__), each wrapped once in the class that defines it."""
    base = getattr(getattr(torch, "optim", None), "Optimizer", None)
    if base is None:
        return

    def wrap_method(method, function):
        @functools.wraps(function)
        def operator(self, *args, **kwargs):
            cls = type(self)  # the optimizer's own class, where the method is its base's
            module = cls.__module__
            prefix = "torch.optim" if module.startswith("torch.optim") else module
            token = object()
            _push(f"{prefix}.{cls.__name__}.{method}", token)
            try:
                return function(self, *args, **kwargs)
            finally:
                _pop(token)
        operator.__gpuprof_operator__ = True
        return operator

    def wrap_class(cls):
        for method in ("step", "zero_grad"):
            value = cls.__dict__.get(method)
            if callable(value) and not getattr(value, "__gpuprof_operator__", False):
                setattr(cls, method, wrap_method(method, value))

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    for cls in [base, *subclasses(base)]:
        wrap_class(cls)
    previous = base.__dict__.get("__init_subclass__")

    @classmethod
    def init_subclass(cls, **kwargs):
        if previous is not None:
            previous.__func__(cls, **kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            wrap_class(cls)
        except Exception:
            pass
    base.__init_subclass__ = init_subclass

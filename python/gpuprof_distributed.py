"""torch.distributed's calls as operators and communication records (gpuprof trace
--torch-trace; installed with gpuprof_torch's hooks).

Each call of a torch.distributed collective or point-to-point function is an operator
range like the others ("torch.autograd.backward/torch.distributed.all_reduce") and one
communication record (docs/MPI.md): the function, the process group ("WORLD", or
"group:NAME"), its size, the peer or root as a global rank, the bytes this rank sent and
received, and for a collective its number on the group, the same on every rank; gpuprof's
cross-rank analysis (summary, advise) then reads torch.distributed as it reads MPI. An
asynchronous call (async_op=True) ends when its work completes.

DistributedDataParallel's gradient all-reduces run in C++, out of Python's sight; a DDP
model without a communication hook of its own gets PyTorch's allreduce_hook at its first
backward pass (the hook PyTorch documents as giving the same results as none), whose
all_reduce is then recorded with the bucket's bytes. A hook the program registers is
kept; a built-in C++ hook (register_builtin_comm_hook) is not seen."""
import ctypes
import functools
import inspect
import os
import threading
import time
import weakref

COMMUNICATION_TORCH = 2

_recorder = None
_sequences = {}
_sequences_lock = threading.Lock()

# function: (collective, how it counts its bytes, the argument naming its root or peer)
_FUNCTIONS = {
    "all_reduce": (True, "same:tensor", None),
    "broadcast": (True, "root:tensor", "src"),
    "reduce": (True, "to_root:tensor", "dst"),
    "all_gather": (True, "gather:tensor:tensor_list", None),
    "all_gather_into_tensor": (True, "gather:input_tensor:output_tensor", None),
    "_all_gather_base": (True, "gather:input_tensor:output_tensor", None),
    "reduce_scatter": (True, "gather:input_list:output", None),
    "reduce_scatter_tensor": (True, "gather:input:output", None),
    "_reduce_scatter_base": (True, "gather:input:output", None),
    "all_to_all": (True, "gather:input_tensor_list:output_tensor_list", None),
    "all_to_all_single": (True, "gather:input:output", None),
    "gather": (True, "gather_to_root:tensor:gather_list", "dst"),
    "scatter": (True, "scatter_from_root:scatter_list:tensor", "src"),
    "barrier": (True, "none", None),
    "send": (False, "send:tensor", "dst"),
    "isend": (False, "send:tensor", "dst"),
    "recv": (False, "recv:tensor", "src"),
    "irecv": (False, "recv:tensor", "src"),
}


def _bytes(value):
    """The bytes of a tensor, or of a list of tensors."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return sum(_bytes(v) for v in value)
    try:
        return int(value.numel()) * int(value.element_size())
    except Exception:
        return 0


def _group(dist, group):
    """The process group's name and size."""
    try:
        c10d = dist.distributed_c10d
        world = c10d._get_default_group()
        if group is None or group is world or group is getattr(dist.group, "WORLD", None):
            return "WORLD", dist.get_world_size()
        name = getattr(c10d, "_pg_names", {}).get(group)
        return f"group:{name if name is not None else id(group)}", dist.get_world_size(group)
    except Exception:
        return "", 0


def _sequence(name):
    with _sequences_lock:
        _sequences[name] = _sequences.get(name, 0) + 1
        return _sequences[name]


def _counts(how, arguments, rank, root):
    """Bytes sent and received by this rank in the call."""
    kind, *names = how.split(":")
    values = [arguments.get(n) for n in names]
    if kind == "same":
        return _bytes(values[0]), _bytes(values[0])
    if kind == "root":
        return (_bytes(values[0]), 0) if rank == root else (0, _bytes(values[0]))
    if kind == "to_root":
        return _bytes(values[0]), _bytes(values[0]) if rank == root else 0
    if kind == "gather":
        return _bytes(values[0]), _bytes(values[1])
    if kind == "gather_to_root":
        return _bytes(values[0]), _bytes(values[1]) if rank == root else 0
    if kind == "scatter_from_root":
        return _bytes(values[0]) if rank == root else 0, _bytes(values[1])
    if kind == "send":
        return _bytes(values[0]), 0
    if kind == "recv":
        return 0, _bytes(values[0])
    return 0, 0


def _record(function, group, size, peer, root, sent, received, sequence, start, tid):
    _recorder.recorder_communication(COMMUNICATION_TORCH, tid, function.encode(),
                                     group.encode(), size, peer, root, sent, received,
                                     sequence, start, time.monotonic_ns())


def _wrap(dist, name, function, push, pop):
    collective, how, party = _FUNCTIONS[name]
    signature = inspect.signature(function)
    label = f"torch.distributed.{name}"

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            bound = signature.bind_partial(*args, **kwargs)
            bound.apply_defaults()
            arguments = bound.arguments
            group, size = _group(dist, arguments.get("group"))
            rank = dist.get_rank()
            other = arguments.get(party, -1) if party else -1
            other = other if isinstance(other, int) else -1
            sent, received = _counts(how, arguments, rank, other)
            sequence = _sequence(group) if collective else 0
            asynchronous = bool(arguments.get("async_op")) or name in ("isend", "irecv")
        except Exception:  # the call as the program made it, unrecorded
            return function(*args, **kwargs)
        token = object()
        push(label, token)
        start, tid = time.monotonic_ns(), threading.get_native_id()
        try:
            result = function(*args, **kwargs)
        finally:
            pop(token)
        peer, root = (other, -1) if not collective else (-1, other)
        record = functools.partial(_record, label, group, size, peer, root, sent, received,
                                   sequence, start, tid)
        try:
            if asynchronous and result is not None and hasattr(result, "get_future"):
                result.get_future().then(lambda future: record())
            else:
                record()
        except Exception:
            pass
        return result
    call.__gpuprof_operator__ = True
    return call


_ddp_waiting = weakref.WeakSet()


def _hook_ddp(torch):
    """DDP models without a hook of their own get allreduce_hook before their first
    backward (see the module's text)."""
    try:
        ddp = torch.nn.parallel.DistributedDataParallel
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    except Exception:
        return None
    init, register = ddp.__init__, ddp.register_comm_hook
    builtin = getattr(ddp, "_register_builtin_comm_hook", None)

    @functools.wraps(init)
    def ddp_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        _ddp_waiting.add(self)

    @functools.wraps(register)
    def ddp_register(self, *args, **kwargs):
        _ddp_waiting.discard(self)
        return register(self, *args, **kwargs)
    ddp.__init__ = ddp_init
    ddp.register_comm_hook = ddp_register
    if builtin is not None:
        @functools.wraps(builtin)
        def ddp_builtin(self, *args, **kwargs):
            _ddp_waiting.discard(self)
            return builtin(self, *args, **kwargs)
        ddp._register_builtin_comm_hook = ddp_builtin

    def before_backward():
        for model in list(_ddp_waiting):
            _ddp_waiting.discard(model)
            try:
                register(model, model.process_group, default_hooks.allreduce_hook)
            except Exception:  # its hook is C++'s, as without gpuprof
                pass
    return before_backward


def install(torch, push, pop):
    """The wrappers, once; returns what to call before each backward pass (or None), or
    raises when the recorder cannot be reached."""
    global _recorder
    if _recorder is not None:
        return None
    dist = getattr(torch, "distributed", None)
    if dist is None or not dist.is_available():
        return None
    recorder = ctypes.CDLL(os.environ["GPUPROF_RECORDER"])
    recorder.recorder_communication.argtypes = [
        ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32,
        ctypes.c_int32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
        ctypes.c_uint64, ctypes.c_uint64]
    recorder.recorder_communication.restype = ctypes.c_uint64
    _recorder = recorder
    for name in _FUNCTIONS:
        function = getattr(dist, name, None)
        if callable(function) and not getattr(function, "__gpuprof_operator__", False):
            setattr(dist, name, _wrap(dist, name, function, push, pop))
    return _hook_ddp(torch)

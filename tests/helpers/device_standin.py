"""A CUDA stand-in on the CPU: tensors "on the device" are tagged, and mixing them with CPU tensors
fails the way it would on a GPU.

While :func:`standin_device` is active, :func:`xaibench.device.torch_device` returns
``torch.device("cuda")`` although no GPU exists.  Two torch modes then emulate a GPU:

* a ``TorchFunctionMode`` rewrites every ``device=cuda`` argument (factories, ``Tensor.to``,
  ``nn.Module.to``, ``.cuda()``) to the CPU and *tags* the result as being on the device (always a
  fresh copy, as a real transfer is: the CPU original stays untagged); ``.cpu()`` / ``.to("cpu")``
  of a tagged tensor returns an untagged copy; ``Tensor.device`` / ``is_cuda`` of a tagged tensor
  report ``cuda:0``; ``.numpy()`` of a tagged tensor fails (as ``can't convert cuda:0 device type
  tensor to numpy`` does).
* a ``TorchDispatchMode`` sees every aten op, backward ops included: an op that mixes tagged and
  untagged tensors fails with :class:`MixedDeviceError` naming the op, and the outputs of an op
  with a tagged input are tagged (so gradients, optimiser states and results stay "on the device").

Tags belong to storages (a view, ``.detach()``, ``.data`` or ``param.data = t`` shares its
storage's tag), kept with a weak reference so that memory freed and reused is not mistaken for a
tagged tensor.  The exceptions mirror what CUDA allows: CPU 0-dim tensors (scalars) mix with
device tensors; CPU index tensors may index a device tensor; cross-device ``copy_``; and
``pack_padded_sequence``'s lengths / a packed sequence's ``batch_sizes`` must stay on the CPU.
"""
from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch.multiprocessing.reductions import StorageWeakRef
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

FAKE = torch.device("cuda")  # what torch_device() returns
FAKE_INDEXED = torch.device("cuda", 0)  # what tensor.device reports, as on a real GPU


class MixedDeviceError(RuntimeError):
    """An op mixed tensors on the (stand-in) device with CPU tensors, or numpy() met a device tensor."""


class _Tags:
    def __init__(self):
        self.refs: dict[int, StorageWeakRef] = {}

    @staticmethod
    def _storage(t: torch.Tensor):
        with torch._C.DisableTorchFunction():  # the real device, not the one the stand-in reports
            if t.is_sparse or t.device.type != "cpu":
                return None
            try:
                s = t.untyped_storage()
            except (RuntimeError, NotImplementedError):
                return None
            return s if s.nbytes() > 0 and s.data_ptr() != 0 else None

    def tag(self, t: torch.Tensor) -> None:
        s = self._storage(t)
        if s is not None:
            self.refs[s.data_ptr()] = StorageWeakRef(s)

    def untag(self, t: torch.Tensor) -> None:
        s = self._storage(t)
        if s is not None:
            self.refs.pop(s.data_ptr(), None)

    def tagged(self, t: torch.Tensor) -> bool:
        s = self._storage(t)
        if s is None:
            return False
        ref = self.refs.get(s.data_ptr())
        if ref is None:
            return False
        if ref.expired() or ref.cdata != StorageWeakRef(s).cdata:
            del self.refs[s.data_ptr()]
            return False
        return True

    def known(self, t: torch.Tensor) -> bool:
        """Has a storage that can carry a tag (non-empty)."""
        return self._storage(t) is not None


def _is_fake(device: Any) -> bool:
    if device is None or isinstance(device, int):
        return False
    try:
        return torch.device(device).type == "cuda"
    except (RuntimeError, TypeError):
        return False


def _tensors(tree) -> list[torch.Tensor]:
    return [x for x in tree_flatten(tree)[0] if isinstance(x, torch.Tensor)]


# aten ops (``OpOverload.name()``) whose listed tensor arguments must stay on the CPU although the
# other inputs are on the device
_CPU_ARGS = {
    "aten::_pack_padded_sequence": {1},   # lengths (a CPU int64 tensor)
    "aten::_pad_packed_sequence": {1},    # batch_sizes
    "aten::lstm.data": {1},               # the packed-sequence overloads: (data, batch_sizes, ...)
    "aten::gru.data": {1},
    "aten::rnn_tanh.data": {1},
    "aten::rnn_relu.data": {1},
}
_CPU_OUTPUTS = {"aten::_pack_padded_sequence", "aten::_pad_packed_sequence"}  # all outputs but the first
_INDEX_OPS = {"aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_",
              "aten::_unsafe_index", "aten::_unsafe_index_put"}
_COPY_OPS = {"aten::copy_", "aten::_to_copy", "aten::copy", "aten::_copy_from", "aten::_copy_from_and_resize",
             "aten::set_", "aten::lift_fresh", "aten::lift_fresh_copy", "aten::lift"}


class _Dispatch(TorchDispatchMode):
    def __init__(self, tags: _Tags, log: list, ctx: list):
        super().__init__()
        self.tags, self.log, self.ctx = tags, log, ctx

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name, overload = func._schema.name, func.name()
        tags = self.tags
        if name in _COPY_OPS:
            out = func(*args, **kwargs)
            if name == "aten::copy_" or name == "aten::set_":
                return out
            src = [t for t in _tensors(args[:1]) if tags.known(t)]
            if src and all(tags.tagged(t) for t in src):
                for t in _tensors(out):
                    tags.tag(t)
            return out
        on, off = [], []
        for i, a in enumerate(args):
            ts = _tensors(a)
            if name in _INDEX_OPS and i == 1:
                # CUDA takes CPU indices for a device tensor (not the other way round)
                if any(tags.tagged(t) for t in ts) and tags.known(args[0]) and not tags.tagged(args[0]):
                    on.append(("indices", ts[0]))
                    off.append(("self", args[0]))
                continue
            if i in _CPU_ARGS.get(overload, ()):
                if any(tags.tagged(t) for t in ts):
                    raise MixedDeviceError(f"{name}: argument {i} must stay on the CPU (CUDA requires it)")
                continue
            for t in ts:
                if not tags.known(t):
                    continue
                if tags.tagged(t):
                    on.append((i, t))
                elif t.dim() > 0:  # CPU scalars (0-dim) mix with device tensors on a GPU too
                    off.append((i, t))
        for k, v in kwargs.items():
            for t in _tensors(v):
                if tags.known(t):
                    if tags.tagged(t):
                        on.append((k, t))
                    elif t.dim() > 0:
                        off.append((k, t))
        if on and off:
            desc = lambda xs: ", ".join(f"{a}:{tuple(t.shape)}/{t.dtype}" for a, t in xs)
            raise MixedDeviceError(f"{name} mixes device tensors ({desc(on)}) with CPU tensors ({desc(off)})")
        out = func(*args, **kwargs)
        if not on and self.ctx[0] and not _tensors((args, kwargs)):
            # a factory inside a torch function called with device tensors (C++ code allocating with
            # ``input.options()``): on the device
            on = [("factory", None)]
        if on:
            # a packed sequence's batch_sizes / the unpacked lengths come back on the CPU
            for t in _tensors(out[:1] if name in _CPU_OUTPUTS else out):
                tags.tag(t)
        self.log.append(name)
        return out


_GET_DEVICE = torch.Tensor.device.__get__
_GET_IS_CUDA = torch.Tensor.is_cuda.__get__
_GET_IS_CPU = torch.Tensor.is_cpu.__get__


class _Function(TorchFunctionMode):
    def __init__(self, tags: _Tags, log: dict, ctx: list):
        super().__init__()
        self.tags, self.log, self.ctx = tags, log, ctx

    def _fresh(self, out, tag: bool):
        def one(t):
            if not isinstance(t, torch.Tensor):
                return t
            t = t.clone()  # a transfer copies: the source keeps its place
            (self.tags.tag if tag else self.tags.untag)(t)
            return t
        return tree_map(one, out)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        tags = self.tags
        if func == _GET_DEVICE:
            return FAKE_INDEXED if tags.tagged(args[0]) else func(*args)
        if func == _GET_IS_CUDA:
            return tags.tagged(args[0]) or func(*args)
        if func == _GET_IS_CPU:
            return (not tags.tagged(args[0])) and func(*args)
        if func in (torch.Tensor.numpy, torch.Tensor.__array__):
            if tags.tagged(args[0]):
                raise MixedDeviceError("numpy() of a tensor on the device: bring it back with .detach().cpu() first")
            return func(*args, **kwargs)
        if func is torch.Tensor.cuda:
            self.log["moves"] += 1
            return self._fresh(args[0], tag=True)
        if func is torch.Tensor.cpu:
            return self._fresh(args[0], tag=False) if tags.tagged(args[0]) else func(*args, **kwargs)
        if func is torch.Tensor.to:
            target = args[0]
            device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args[1:], **kwargs)
            other = next((a for a in list(args[1:]) + list(kwargs.values()) if isinstance(a, torch.Tensor)), None)
            to_fake = _is_fake(device) or (other is not None and tags.tagged(other))
            if device is None and not to_fake:
                return func(*args, **kwargs)
            out = target.to(dtype=dtype if dtype is not None else target.dtype)
            if to_fake:
                self.log["moves"] += 1
                return self._fresh(out, tag=True)
            return self._fresh(out, tag=False) if tags.tagged(target) else out
        if func is torch._C._nn._parse_to:  # nn.Module.to parses its arguments first: keep the device
            return func(*args, **kwargs)
        fake = "device" in kwargs and _is_fake(kwargs["device"])
        if fake:
            kwargs["device"] = "cpu"
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        inside = any(tags.tagged(t) for t in _tensors((args, kwargs)))
        self.ctx[0] += inside
        try:
            out = func(*args, **kwargs)
        finally:
            self.ctx[0] -= inside
        if fake:
            self.log["moves"] += 1
            return self._fresh(out, tag=True)
        if inside and getattr(func, "__name__", "") in ("_pack_padded_sequence", "_pad_packed_sequence"):
            for t in _tensors(out[1:]):  # batch_sizes / lengths stay on the CPU
                tags.untag(t)
        return out


@contextlib.contextmanager
def standin_device(monkeypatch):
    """Run a block as if ``XAIBENCH_DEVICE=cuda`` selected a GPU (see the module docstring);
    yields a dict: ``"tagged"(tensor)`` says whether a tensor is on the (stand-in) device, ``"moves"``
    counts transfers to the device and ``"ops"`` lists the aten ops the dispatch mode checked."""
    from xaibench import device as dev

    tags, ctx = _Tags(), [0]
    log: dict[str, Any] = {"moves": 0, "ops": [], "tagged": tags.tagged}
    monkeypatch.setattr(dev, "torch_device", lambda: FAKE)
    with _Function(tags, log, ctx), _Dispatch(tags, log["ops"], ctx):
        yield log

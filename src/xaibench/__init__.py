"""xaibench."""
from .progress import quiet_kernel_output as _quiet_kernel_output

_quiet_kernel_output()  # executed notebooks: no library progress bars or widget warnings

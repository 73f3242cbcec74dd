-- sysbench 1.0.20 tests/t/api_reports.t: a report hook set to sysbench.report_default.
ffi.cdef[[int usleep(unsigned int);]]

function event()
  ffi.C.usleep(1000)
end

sysbench.hooks.report_intermediate = sysbench.report_default
sysbench.hooks.report_cumulative = sysbench.report_default

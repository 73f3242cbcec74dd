-- Makes a driver and never connects: sysbench reports SQL statistics.
ffi.cdef[[int usleep(unsigned int);]]
function thread_init()
  drv = sysbench.sql.driver()
end

function event()
  ffi.C.usleep(1000)
end

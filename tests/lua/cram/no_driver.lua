-- Never calls sysbench.sql.driver(): sysbench reports events only.
ffi.cdef[[int usleep(unsigned int);]]

function event()
  ffi.C.usleep(1000)
end

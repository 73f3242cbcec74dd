-- A syntax error on line 3.
function event()
   local x = = 1
end

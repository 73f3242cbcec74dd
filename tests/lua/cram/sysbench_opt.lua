-- Prints sysbench.opt sorted: name, type and value (a list's items with their types).
function prepare()
  local names = {}
  for name in pairs(sysbench.opt) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local value = sysbench.opt[name]
    local shown = tostring(value)
    if type(value) == "table" then
      local items = {}
      for i, item in ipairs(value) do items[i] = type(item) .. ":" .. tostring(item) end
      shown = "{" .. table.concat(items, ",") .. "}"
    end
    print(name .. " " .. type(value) .. " " .. shown)
  end
end

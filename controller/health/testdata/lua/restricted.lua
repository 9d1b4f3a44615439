-- What a check without the open libraries has: base functions, table, os
-- and require. Times as numbers, dates printed with os.date.
local started = os.time({year = 2026, month = 3, day = 1, hour = 0})
local finished = os.time({year = "2026", month = "03", day = "01", hour = "01", min = "30"})
local parts = {}
for i, step in ipairs(obj.status.steps) do
  table.insert(parts, i .. "=" .. tostring(step.done))
end
local keys = 0
for _ in pairs(obj.status) do keys = keys + 1 end
return {
  status = "Healthy",
  message = table.concat(parts, ",") .. " keys=" .. keys .. " took=" .. os.difftime(finished, started) ..
    " epoch=" .. os.date("!%Y-%m-%dT%H:%M:%SZ", 86400) .. " n=" .. tostring(tonumber("0x10"))
}

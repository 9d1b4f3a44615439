-- A rollout-style check: conditions by type, messages searched with
-- string.find, lists split with gmatch, counts with #, select and next.
local hs = {}
local conditions = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  conditions = obj.status.conditions
end
if next(conditions) == nil then
  return {status = "Progressing", message = "No conditions yet"}
end

local byType = {}
for _, c in ipairs(conditions) do
  byType[c.type] = c
end

local function count(...)
  return select("#", ...)
end

local progressing = byType["Progressing"]
if progressing ~= nil and string.find(progressing.reason or "", "ProgressDeadlineExceeded", 1, true) then
  hs.status = "Degraded"
  hs.message = progressing.message
  return hs
end

local zones = {}
for zone in string.gmatch(obj.spec.zones or "", "[^,%s]+") do
  table.insert(zones, string.upper(string.sub(zone, -1)))
end

local types = {}
for t in pairs(byType) do
  types[#types + 1] = t
end
table.sort(types)

local replicas = tonumber(obj.spec.replicas) or 0
local ready = math.max(0, tonumber(obj.status.readyReplicas) or 0)
if ready < replicas then
  hs.status = "Progressing"
else
  hs.status = "Healthy"
end
hs.message = string.format("%d/%d ready; conditions %s; zones %s; %d args; %s",
  ready, replicas, table.concat(types, "+"), table.concat(zones, ""),
  count(1, nil, 3), type(byType.Available))
return hs

-- Conditions kept as JSON in an annotation, decoded with the json module
-- Argo CD preloads (restricted libraries suffice).
local json = require("json")
local raw = obj.metadata.annotations and obj.metadata.annotations["example.com/conditions"]
if raw == nil then
  return {status = "Progressing", message = "No conditions"}
end
local conditions, err = json.decode(raw)
if conditions == nil then
  return {status = "Degraded", message = "Bad annotation: " .. err}
end
for _, c in ipairs(conditions) do
  if c.status == "False" then
    return {status = "Degraded", message = c.type .. ": " .. (c.message or "")}
  end
end
return {status = "Healthy", message = #conditions .. " conditions, " .. json.encode(conditions[1])}

-- String methods, string.format with %q, gsub with captures, unpack and
-- pcall, as open-library checks use them.
local ns, name = obj.metadata.namespace, obj.metadata.name
local id = ("%s/%s"):format(ns, name):upper()
local version = (obj.spec.image or ""):match(":([%w%.%-]+)$") or "latest"
local major = tonumber((version:gsub("^v", ""):match("^(%d+)"))) or 0
local ok, err = pcall(error, "boom")
local a, b = unpack({"x", "y"})
local status = "Healthy"
if major < 2 then
  status = "Degraded"
end
return {status = status, message = string.format("%s runs %q (major %d) %s%s %s", id, version, major, a, b, tostring(ok))}

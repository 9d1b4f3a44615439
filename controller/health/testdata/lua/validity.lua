-- How long a certificate is valid, from two RFC 3339 timestamps, the way
-- community checks parse times: string.match captures (strings) handed to
-- os.time as they are. Needs the open libraries (string, math).
local function parseTime(s)
  local y, mo, d, h, mi, sec = string.match(s, "^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)")
  if y == nil then
    return nil
  end
  return os.time({year = y, month = mo, day = d, hour = h, min = mi, sec = sec})
end

local hs = {status = "Progressing", message = "Waiting for the certificate"}
if obj.status == nil or obj.status.notBefore == nil or obj.status.notAfter == nil then
  return hs
end
local from, to = parseTime(obj.status.notBefore), parseTime(obj.status.notAfter)
if from == nil or to == nil then
  hs.status = "Degraded"
  hs.message = "Unreadable validity period"
  return hs
end
local days = math.floor(os.difftime(to, from) / 86400)
if days < 30 then
  hs.status = "Degraded"
else
  hs.status = "Healthy"
end
hs.message = string.format("Valid for %d days, until %s", days, os.date("!%F", to))
return hs

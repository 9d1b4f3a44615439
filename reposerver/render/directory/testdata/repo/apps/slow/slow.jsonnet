// Runs (practically) forever, importing at every step, so that a
// cancelled render stops its evaluation at the next import.
local loop(n, acc) =
  if n == 0 then acc
  else loop(n - 1, acc + std.length(importstr 'tick.txt')) tailstrict;
{
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'slow' },
  data: { n: std.toString(loop(1000000000000, 0)) },
}

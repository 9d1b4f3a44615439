// Uses a library path (labels), an import next to the file (parts/),
// importstr, external variables and top-level arguments.
local labels = import 'labels.libsonnet';
local cm = import 'parts/cm.libsonnet';

function(replicas=1, tier='none') [
  cm('settings-' + std.extVar('env'), {
    greeting: importstr 'greeting.txt',
    app: std.extVar('app'),
    tier: tier,
  }),
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', labels: labels.labels('web') },
    spec: { replicas: replicas },
  },
]

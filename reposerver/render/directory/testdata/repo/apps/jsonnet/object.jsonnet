{
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'jsonnet-object' },
}

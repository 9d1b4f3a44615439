{
  apiVersion: 'v1',
  kind: 'List',
  items: [
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'jsonnet-list-' + i } }
    for i in ['a', 'b']
  ],
}

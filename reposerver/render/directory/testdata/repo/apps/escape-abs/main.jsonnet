{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { p: importstr '/etc/passwd' } }

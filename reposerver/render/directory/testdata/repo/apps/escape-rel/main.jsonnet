import '../../../outside.libsonnet'

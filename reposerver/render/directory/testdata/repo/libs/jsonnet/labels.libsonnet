{
  // labels returns the recommended labels for an app.
  labels(app):: { 'app.kubernetes.io/name': app },
}

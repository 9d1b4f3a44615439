package v1alpha1

// DefaultProject is the project of an Application that names none.
const DefaultProject = "default"

// ProjectName is the app's project: spec.project, or DefaultProject when
// it is empty.
func (in *Application) ProjectName() string {
	if in.Spec.Project == "" {
		return DefaultProject
	}
	return in.Spec.Project
}

// ProjectName is the project of the set's template: spec.template.spec.project,
// or DefaultProject when it is empty. It may be templated ("{{.project}}");
// the API authorizes a set on it, as Argo CD does.
func (in *ApplicationSet) ProjectName() string {
	if in.Spec.Template.Spec.Project == "" {
		return DefaultProject
	}
	return in.Spec.Template.Spec.Project
}

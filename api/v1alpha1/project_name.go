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

package notifications

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/graphcd/graphcd/api/v1alpha1"
)

// AppObject is the Application as the API server returns it, the JSON
// object triggers and templates read (app.status.operationState.phase
// ...).
func AppObject(app *v1alpha1.Application) (map[string]any, error) {
	c := app.DeepCopy()
	c.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("Application"))
	return runtime.DefaultUnstructuredConverter.ToUnstructured(c)
}

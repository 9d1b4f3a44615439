package plugin

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		want     *Config
		wantName string
		wantErr  string
	}{
		{
			name: "full Argo CD example",
			yaml: `
apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata:
  name: my-plugin
spec:
  version: v1.0
  init:
    command: [sh]
    args: [-c, 'echo "Initializing..."']
  generate:
    command: [sh, -c]
    args: ["echo hi"]
  discover:
    fileName: "./subdir/s*.yaml"
    find:
      glob: "**/Chart.yaml"
      command: [sh, -c, find . -name env.yaml]
  parameters:
    static:
      - name: string-param
        title: Description of the string param
        tooltip: Tooltip
        required: true
        itemType: ""
        collectionType: ""
        string: default-string-value
      - name: array-param
        array: [default, items]
        collectionType: array
      - name: map-param
        map:
          some: value
        collectionType: map
    dynamic:
      command: [echo, '[{"name": "example-param", "string": "default-string-value"}]']
  preserveFileMode: true
  provideGitCreds: true
`,
			want: &Config{
				APIVersion: ArgoCDAPIVersion,
				Kind:       ConfigKind,
				Metadata:   ConfigMetadata{Name: "my-plugin"},
				Spec: Spec{
					Version:  "v1.0",
					Init:     &Command{Command: []string{"sh"}, Args: []string{"-c", `echo "Initializing..."`}},
					Generate: Command{Command: []string{"sh", "-c"}, Args: []string{"echo hi"}},
					Discover: &DiscoverSpec{
						FileName: "./subdir/s*.yaml",
						Find: Find{
							Glob:    "**/Chart.yaml",
							Command: Command{Command: []string{"sh", "-c", "find . -name env.yaml"}},
						},
					},
					Parameters: &ParametersSpec{
						Static: []ParameterAnnouncement{
							{Name: "string-param", Title: "Description of the string param", Tooltip: "Tooltip", Required: true, String: "default-string-value"},
							{Name: "array-param", Array: []string{"default", "items"}, CollectionType: "array"},
							{Name: "map-param", Map: map[string]string{"some": "value"}, CollectionType: "map"},
						},
						Dynamic: &Command{Command: []string{"echo", `[{"name": "example-param", "string": "default-string-value"}]`}},
					},
					PreserveFileMode: true,
					ProvideGitCreds:  true,
				},
			},
			wantName: "my-plugin-v1.0",
		},
		{
			name: "graphcd apiVersion, no version",
			yaml: `
apiVersion: graphcd.io/v1alpha1
kind: ConfigManagementPlugin
metadata: {name: cue}
spec:
  generate: {command: [cue, export]}
`,
			want: &Config{
				APIVersion: GraphCDAPIVersion,
				Kind:       ConfigKind,
				Metadata:   ConfigMetadata{Name: "cue"},
				Spec:       Spec{Generate: Command{Command: []string{"cue", "export"}}},
			},
			wantName: "cue",
		},
		{
			name: "nested find command",
			yaml: `
apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata: {name: np}
spec:
  generate: {command: [a]}
  discover:
    find:
      command: {command: [sh, -c], args: [ls]}
`,
			want: &Config{
				APIVersion: ArgoCDAPIVersion,
				Kind:       ConfigKind,
				Metadata:   ConfigMetadata{Name: "np"},
				Spec: Spec{
					Generate: Command{Command: []string{"a"}},
					Discover: &DiscoverSpec{Find: Find{Command: Command{Command: []string{"sh", "-c"}, Args: []string{"ls"}}}},
				},
			},
			wantName: "np",
		},
		{
			name: "inline find command with args",
			yaml: `
apiVersion: argoproj.io/v1alpha1
kind: ConfigManagementPlugin
metadata: {name: np}
spec:
  generate: {command: [a]}
  discover:
    find:
      command: [sh, -c]
      args: [ls]
`,
			want: &Config{
				APIVersion: ArgoCDAPIVersion,
				Kind:       ConfigKind,
				Metadata:   ConfigMetadata{Name: "np"},
				Spec: Spec{
					Generate: Command{Command: []string{"a"}},
					Discover: &DiscoverSpec{Find: Find{Command: Command{Command: []string{"sh", "-c"}, Args: []string{"ls"}}}},
				},
			},
			wantName: "np",
		},
		{
			name:    "wrong kind",
			yaml:    "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: x}\nspec: {generate: {command: [a]}}",
			wantErr: `kind "Application"`,
		},
		{
			name:    "wrong apiVersion",
			yaml:    "apiVersion: v1\nkind: ConfigManagementPlugin\nmetadata: {name: x}\nspec: {generate: {command: [a]}}",
			wantErr: `apiVersion "v1"`,
		},
		{
			name:    "no name",
			yaml:    "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nspec: {generate: {command: [a]}}",
			wantErr: "metadata.name is empty",
		},
		{
			name:    "name with a slash",
			yaml:    "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: ../evil}\nspec: {generate: {command: [a]}}",
			wantErr: `plugin name "../evil"`,
		},
		{
			name:    "version with a slash",
			yaml:    "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: ok}\nspec: {version: a/b, generate: {command: [a]}}",
			wantErr: `plugin name "ok-a/b"`,
		},
		{
			name:    "no generate command",
			yaml:    "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: x}\nspec: {generate: {args: [a]}}",
			wantErr: "spec.generate.command is empty",
		},
		{
			name:    "static parameter without name",
			yaml:    "apiVersion: argoproj.io/v1alpha1\nkind: ConfigManagementPlugin\nmetadata: {name: x}\nspec: {generate: {command: [a]}, parameters: {static: [{title: t}]}}",
			wantErr: "static[0].name is empty",
		},
		{
			name:    "not YAML",
			yaml:    "{{{",
			wantErr: "invalid plugin configuration",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("ParseConfig() error = %v, want ErrInvalidConfig containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseConfig() error = %v", err)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("ParseConfig() (-got +want):\n%s", diff)
			}
			if got.Name() != tt.wantName {
				t.Errorf("Name() = %q, want %q", got.Name(), tt.wantName)
			}
		})
	}
}

func TestDiscoverEnabled(t *testing.T) {
	tests := []struct {
		name string
		d    *DiscoverSpec
		want bool
	}{
		{"nil", nil, false},
		{"empty", &DiscoverSpec{}, false},
		{"fileName", &DiscoverSpec{FileName: "*.cue"}, true},
		{"glob", &DiscoverSpec{Find: Find{Glob: "**/*.cue"}}, true},
		{"command", &DiscoverSpec{Find: Find{Command: Command{Command: []string{"true"}}}}, true},
		{"args only", &DiscoverSpec{Find: Find{Command: Command{Args: []string{"x"}}}}, false},
	}
	for _, tt := range tests {
		if got := tt.d.Enabled(); got != tt.want {
			t.Errorf("%s: Enabled() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestTestdataConfigs keeps the fixtures of the integration tests valid.
func TestTestdataConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := LoadConfig(f); err != nil {
			t.Errorf("LoadConfig(%s) error = %v", f, err)
		}
	}
}

func TestLoadConfigMissing(t *testing.T) {
	if _, err := LoadConfig(filepath.Join(t.TempDir(), "plugin.yaml")); err == nil {
		t.Fatal("LoadConfig() of a missing file succeeded")
	}
}

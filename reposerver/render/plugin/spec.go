package plugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"

	"sigs.k8s.io/yaml"
)

// Kind and the API versions a plugin.yaml may carry.
const (
	ConfigKind          = "ConfigManagementPlugin"
	ArgoCDAPIVersion    = "argoproj.io/v1alpha1"
	GraphCDAPIVersion   = "graphcd.io/v1alpha1"
	maxConfigFileLength = 1 << 20
)

// Config is a plugin.yaml: a ConfigManagementPlugin in Argo CD's format.
// It looks like a Kubernetes object but is only ever read from a file.
type Config struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   ConfigMetadata `json:"metadata"`
	Spec       Spec           `json:"spec"`
}

// ConfigMetadata holds the plugin's name.
type ConfigMetadata struct {
	Name string `json:"name"`
}

// Spec says how a plugin renders, which applications it claims and which
// parameters it announces.
type Spec struct {
	// Version, when set, becomes part of the plugin's name: <name>-<version>.
	Version string `json:"version,omitempty"`
	// Init runs in the app directory right before Generate; its output is
	// discarded, a failure fails the render.
	Init *Command `json:"init,omitempty"`
	// Generate runs in the app directory and prints the manifests (YAML or
	// JSON) on stdout.
	Generate Command `json:"generate"`
	// Discover decides which applications the plugin claims when they do
	// not name a plugin.
	Discover *DiscoverSpec `json:"discover,omitempty"`
	// Parameters are announced to the UI; they are never sent to the
	// plugin as defaults.
	Parameters *ParametersSpec `json:"parameters,omitempty"`
	// PreserveFileMode keeps the executable bits of repository files;
	// otherwise every file arrives as 0644.
	PreserveFileMode bool `json:"preserveFileMode,omitempty"`
	// ProvideGitCreds is accepted for compatibility and ignored: graphcd
	// never hands Git credentials to a plugin.
	ProvideGitCreds bool `json:"provideGitCreds,omitempty"`
}

// Command is an executable with arguments: Command[0] runs with
// Command[1:] followed by Args, as in Argo CD.
type Command struct {
	Command []string `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
}

// IsSet reports whether c names an executable.
func (c *Command) IsSet() bool { return c != nil && len(c.Command) > 0 }

// argv is the full argument vector.
func (c *Command) argv() []string {
	return append(append([]string(nil), c.Command...), c.Args...)
}

// DiscoverSpec holds the discovery rules. Only the first set of FileName,
// Find.Glob and Find.Command is used, in that order.
type DiscoverSpec struct {
	// FileName is a filepath.Glob pattern relative to the app directory.
	FileName string `json:"fileName,omitempty"`
	Find     Find   `json:"find,omitzero"`
}

// Find is a "**"-capable glob (relative to the app directory), or a command
// run in the repository root that claims the app by exiting 0 with
// non-empty output. As in Argo CD, the command's fields sit inline
// (find: {command: [sh, -c], args: [...]}); the nested form
// find: {command: {command: [...], args: [...]}} is accepted too.
type Find struct {
	Command
	Glob string `json:"glob,omitempty"`
}

// UnmarshalJSON accepts the inline and the nested form of the command.
func (f *Find) UnmarshalJSON(data []byte) error {
	var raw struct {
		Glob    string          `json:"glob"`
		Command json.RawMessage `json:"command"`
		Args    []string        `json:"args"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*f = Find{Glob: raw.Glob, Command: Command{Args: raw.Args}}
	cmd := bytes.TrimSpace(raw.Command)
	switch {
	case len(cmd) == 0 || bytes.Equal(cmd, []byte("null")):
	case cmd[0] == '{':
		var nested Command
		if err := json.Unmarshal(cmd, &nested); err != nil {
			return fmt.Errorf("discover.find.command: %w", err)
		}
		if len(raw.Args) > 0 {
			return errors.New("discover.find: args next to a nested command")
		}
		f.Command = nested
	default:
		if err := json.Unmarshal(cmd, &f.Command.Command); err != nil {
			return fmt.Errorf("discover.find.command: %w", err)
		}
	}
	return nil
}

// Enabled reports whether any discovery rule is set; a plugin without one
// is used only when an application names it.
func (d *DiscoverSpec) Enabled() bool {
	return d != nil && (d.FileName != "" || d.Find.Glob != "" || d.Find.IsSet())
}

// ParametersSpec holds the plugin's parameter announcements.
type ParametersSpec struct {
	Static  []ParameterAnnouncement `json:"static,omitempty"`
	Dynamic *Command                `json:"dynamic,omitempty"`
}

// ParameterAnnouncement describes one parameter for the UI. String, Array
// and Map are defaults to show; the plugin applies them itself.
type ParameterAnnouncement struct {
	Name           string            `json:"name,omitempty"`
	Title          string            `json:"title,omitempty"`
	Tooltip        string            `json:"tooltip,omitempty"`
	Required       bool              `json:"required,omitempty"`
	ItemType       string            `json:"itemType,omitempty"`
	CollectionType string            `json:"collectionType,omitempty"`
	String         string            `json:"string,omitempty"`
	Array          []string          `json:"array,omitempty"`
	Map            map[string]string `json:"map,omitempty"`
}

// nameRE keeps plugin names usable as socket file names.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// ErrInvalidConfig is wrapped by every error about a plugin.yaml's content.
var ErrInvalidConfig = errors.New("invalid plugin configuration")

// Name is the name applications use for the plugin: metadata.name, or
// <metadata.name>-<spec.version> when a version is set.
func (c *Config) Name() string {
	if c.Spec.Version != "" {
		return c.Metadata.Name + "-" + c.Spec.Version
	}
	return c.Metadata.Name
}

// ParseConfig reads a plugin.yaml document and validates it.
func ParseConfig(data []byte) (*Config, error) {
	if len(data) > maxConfigFileLength {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrInvalidConfig, maxConfigFileLength)
	}
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// LoadConfig reads and validates the plugin.yaml at path.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read plugin configuration: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Validate checks what the server relies on: the kind, a usable name and
// a generate command.
func (c *Config) Validate() error {
	if c.Kind != ConfigKind {
		return fmt.Errorf("%w: kind %q, want %s", ErrInvalidConfig, c.Kind, ConfigKind)
	}
	if c.APIVersion != ArgoCDAPIVersion && c.APIVersion != GraphCDAPIVersion {
		return fmt.Errorf("%w: apiVersion %q, want %s or %s", ErrInvalidConfig, c.APIVersion, ArgoCDAPIVersion, GraphCDAPIVersion)
	}
	if c.Metadata.Name == "" {
		return fmt.Errorf("%w: metadata.name is empty", ErrInvalidConfig)
	}
	if !nameRE.MatchString(c.Name()) {
		return fmt.Errorf("%w: plugin name %q: use letters, digits, '.', '_' and '-' (at most 100)", ErrInvalidConfig, c.Name())
	}
	if !c.Spec.Generate.IsSet() {
		return fmt.Errorf("%w: spec.generate.command is empty", ErrInvalidConfig)
	}
	if c.Spec.Init != nil && len(c.Spec.Init.Args) > 0 && !c.Spec.Init.IsSet() {
		return fmt.Errorf("%w: spec.init has args but no command", ErrInvalidConfig)
	}
	if p := c.Spec.Parameters; p != nil {
		if p.Dynamic != nil && len(p.Dynamic.Args) > 0 && !p.Dynamic.IsSet() {
			return fmt.Errorf("%w: spec.parameters.dynamic has args but no command", ErrInvalidConfig)
		}
		for i, a := range p.Static {
			if a.Name == "" {
				return fmt.Errorf("%w: spec.parameters.static[%d].name is empty", ErrInvalidConfig, i)
			}
		}
	}
	return nil
}

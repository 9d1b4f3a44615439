package command

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// EnvPrefix prefixes the environment variable of every flag.
const EnvPrefix = "GRAPHCD_"

// envAnnotation marks, on a flag, that its value came from the environment.
const envAnnotation = "graphcd.io/from-env"

// EnvName returns the environment variable for a flag: --log-level is
// GRAPHCD_LOG_LEVEL.
func EnvName(flag string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// skipEnv reports flags that must not be read from the environment.
func skipEnv(f *pflag.Flag) bool { return f.Name == "help" }

// BindEnv sets each flag of c that was not given on the command line from
// its GRAPHCD_* variable, if that is set and not empty.
func BindEnv(c *cobra.Command) error {
	var err error
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || skipEnv(f) {
			return
		}
		name := EnvName(f.Name)
		v := os.Getenv(name)
		if v == "" {
			return
		}
		// Value.Set, not FlagSet.Set: Changed stays false, because the
		// command line did not set the flag.
		if setErr := f.Value.Set(v); setErr != nil {
			err = &UsageError{Cmd: c, Err: fmt.Errorf("invalid value %q for %s: %w", v, name, setErr)}
			return
		}
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[envAnnotation] = []string{name}
	})
	return err
}

// FlagOrigin names where a flag's value came from, for error messages:
// "GRAPHCD_LISTEN" if BindEnv set it, otherwise "--listen".
func FlagOrigin(c *cobra.Command, name string) string {
	if f := c.Flags().Lookup(name); f != nil {
		if env, ok := f.Annotations[envAnnotation]; ok {
			return env[0]
		}
	}
	return "--" + name
}

// DocumentEnv appends each flag's environment variable to its help text,
// in c and every command below it.
func DocumentEnv(c *cobra.Command) {
	add := func(f *pflag.Flag) {
		if !skipEnv(f) {
			f.Usage += " [$" + EnvName(f.Name) + "]"
		}
	}
	c.LocalNonPersistentFlags().VisitAll(add)
	c.PersistentFlags().VisitAll(add)
	for _, sub := range c.Commands() {
		DocumentEnv(sub)
	}
}

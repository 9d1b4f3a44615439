package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/graphcd/graphcd/client"
	"github.com/graphcd/graphcd/cmd/graphcd/internal/command"
)

// apiOptions are the flags of the proj, repo, repocreds, cluster and
// account commands.
type apiOptions struct {
	cliOptions
	output *command.Enum
}

// newAPIGroup returns a command that only groups subcommands, with the
// server flags and -o for all of them.
func newAPIGroup(use, short string, subs func(o *apiOptions) []*cobra.Command) *cobra.Command {
	o := &apiOptions{cliOptions: cliOptions{}, output: newOutput()}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  command.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	f := c.PersistentFlags()
	o.addServerFlags(f)
	f.VarP(o.output, "output", "o", "output format: "+strings.Join(outputFormats, ", "))
	c.AddCommand(subs(o)...)
	return c
}

// allPages fetches a connection a page (of ListPageSize) at a time until
// the last; page returns one page's nodes and its pageInfo.
func allPages[N any](page func(after *string) ([]N, client.PageFields, error)) ([]N, error) {
	var all []N
	var after *string
	for {
		nodes, info, err := page(after)
		if err != nil {
			return nil, err
		}
		all = append(all, nodes...)
		if !info.HasNextPage || info.EndCursor == nil {
			return all, nil
		}
		after = info.EndCursor
	}
}

// printNames prints one name a line, for -o name.
func printNames(w io.Writer, names ...string) error {
	for _, n := range names {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// printDone reports a change: the object's name with -o name, else a
// sentence.
func printDone(w io.Writer, format, name, sentence string) error {
	if format == "name" {
		return printNames(w, name)
	}
	_, err := fmt.Fprintln(w, sentence)
	return err
}

// printToken prints a token just issued: the bearer token alone (for
// $(...) in scripts), its ID with -o name, or {id, token, issuedAt,
// expiresAt} with -o json or yaml.
func printToken(w io.Writer, format string, t *client.IssuedToken) error {
	switch format {
	case "json", "yaml":
		return printStructured(w, format, t)
	case "name":
		return printNames(w, t.Id)
	}
	_, err := fmt.Fprintln(w, t.Token)
	return err
}

// optional returns nil for "", else &s: null for the API.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// expiry formats a token's expiry; never for none.
func expiry(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.Format(time.RFC3339)
}

// checkDuration checks a --expires-in as a Go duration before the server
// does, so that a typo is a usage error.
func checkDuration(c *cobra.Command, flag, s string) (*string, error) {
	if s == "" {
		return nil, nil
	}
	if d, err := time.ParseDuration(s); err != nil || d <= 0 {
		return nil, &command.UsageError{Cmd: c, Err: fmt.Errorf("--%s %q: want a positive duration such as 720h", flag, s)}
	}
	return &s, nil
}

// maxSecretLine bounds a password read from stdin.
const maxSecretLine = 4 << 10

// secrets reads passwords: from a prompt without echo when stdin is a
// terminal, else one line of stdin each.
type secrets struct {
	in     io.Reader
	tty    bool
	lines  *bufio.Reader
	stderr io.Writer
}

func newSecrets(c *cobra.Command, stderr io.Writer) *secrets {
	in := c.InOrStdin()
	return &secrets{in: in, tty: isTerminal(in), stderr: stderr}
}

// line reads the next line of stdin, without its line ending; what names
// it in errors.
func (s *secrets) line(what string) (string, error) {
	if s.lines == nil {
		s.lines = bufio.NewReader(io.LimitReader(s.in, maxSecretLine))
	}
	line, err := s.lines.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the %s from stdin: %w", what, err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("no %s on stdin", what)
	}
	return line, nil
}

// ask prompts for what on the terminal, else reads a line of stdin.
func (s *secrets) ask(what string) (string, error) {
	if !s.tty {
		return s.line(what)
	}
	_, _ = fmt.Fprintf(s.stderr, "%s: ", strings.ToUpper(what[:1])+what[1:])
	pw, err := term.ReadPassword(int(s.in.(*os.File).Fd())) //nolint:gosec,forcetypeassert // isTerminal checked it is an *os.File; fds fit an int
	_, _ = fmt.Fprintln(s.stderr)
	if err != nil {
		return "", fmt.Errorf("read the %s: %w", what, err)
	}
	if len(pw) == 0 {
		return "", fmt.Errorf("no %s given", what)
	}
	return string(pw), nil
}

// readSecretFile reads a credential from a file (- for stdin), without
// the trailing line ending of a token file.
func readSecretFile(c *cobra.Command, path string) (string, error) {
	b, err := command.ReadInput(c, path)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

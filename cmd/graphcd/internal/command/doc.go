// Package command holds what all of graphcd's commands share, the daemons,
// the operators' tools (package admin) and the user CLI (package cli):
// how errors end the process (Execute, UsageError, ExitCodeError), flags
// read from GRAPHCD_* environment variables (BindEnv, FlagOrigin), flags
// restricted to a set of values (Enum), bounded input files (ReadInput)
// and aligned tables (Table).
//
// main builds the command tree and hands it to Execute:
//
//	os.Exit(command.Execute(ctx, root, os.Args[1:], os.Stderr))
//
// Errors print as one line, "graphcd: <message>", and exit 1; usage errors
// (an unknown flag or command, an invalid flag value) exit 2 and point at
// --help; an ExitCodeError chooses its own code.
package command

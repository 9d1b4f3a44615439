// Package importrules holds, in its test, the one table of which graphcd
// packages may depend on which: the leaves stay leaves, the engines know
// nothing of the layers above them, and the packages that only need the
// repository server's contract do not link its renderers. It has no code.
package importrules

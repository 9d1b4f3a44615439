// Package project enforces AppProjects.
package project

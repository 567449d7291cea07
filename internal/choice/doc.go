// Package choice formats the allowed values of a setting for error
// messages, so that every package names them the same way:
// "(allowed: tb, eps, prt)" rather than Go's "[tb eps prt]".
package choice

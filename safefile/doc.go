// Package safefile writes files atomically: the content goes to a temporary
// file in the destination's directory, is synced, and is renamed over the
// destination only when complete. A failed write (full disk, encoder error)
// leaves any previous file intact and no partial file behind.
package safefile

// Package bench holds gfn's reproducible measurements: Speed times
// training iterations (early and late in training) on the paper's
// configurations, and reports the machine they ran on, so that runs on
// different machines can be compared.
package bench

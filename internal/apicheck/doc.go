// Package apicheck holds no code: its test, run with the module's other
// tests, checks the public surface of every library package of the module.
//
// The test parses each non-test Go file of every non-main package (cmd/,
// examples/ and testdata are skipped) and fails, naming file:line and the
// identifier, when
//
//   - an exported top-level identifier (function, method of an exported type,
//     type, constant, variable) has no doc comment; for a grouped const, var
//     or type block a doc comment on the group counts;
//   - a string literal given to errors.New, or as the format of fmt.Errorf,
//     does not start with "<package name>: ", so that every error says where
//     it comes from (the test's wrapsPrefixed lists the few formats that
//     start with %w instead, each wrapping an error of the same package that
//     already carries the prefix, or, in package run, of the training
//     package that calls it);
//   - an interface type literal appears anonymously (anywhere but as the
//     definition of a named type or as a type-parameter constraint): optional
//     capabilities are named, documented interfaces.
//
// The test's excluded list names the packages and files it skips for now.
package apicheck

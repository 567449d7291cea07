// Package rewardcmd computes rewards with a user's program in any language:
// gfn starts the program as a subprocess and speaks a small, versioned line
// protocol with it over its standard input and output. A Client is the gfn
// side; SeqTask, Energy and Client.Cells adapt it to the sequence trainer
// (seqtrain.Task), the diffusion samplers (energy.Energy) and the
// hypergrid (hypergrid.NewCustom).
//
// # Starting the program
//
// Start runs the command with "sh -c COMMAND" ("cmd /C" on Windows), so
// quoting, environment variables and pipes work as in a shell, in its own
// process group (so that stopping it stops its children too). Its standard
// error is the user's: Options.Stderr receives it as it comes, and the end
// of it is quoted in the error when the program exits early.
//
// # Protocol gfn-reward, version 1
//
// Every message is one line of UTF-8 JSON ending in "\n": gfn writes to the
// program's standard input, the program answers on its standard output
// (blank lines are skipped; anything else a program prints there breaks
// the protocol, so messages for people belong on standard error).
//
// 1. Handshake. gfn sends the task's shape first; the program answers
// {"ok":true}, or {"ok":false,"error":"why"} to refuse the task. An answer
// may carry "version"; if it does, it must be 1.
//
//	{"protocol":"gfn-reward","version":1,"kind":"sequence","length":8,"alphabet":["A","C","G","T"]}
//	{"protocol":"gfn-reward","version":1,"kind":"points","dim":2}
//	{"protocol":"gfn-reward","version":1,"kind":"grid","dim":2,"side":16}
//
// 2. Batches. gfn sends batches of objects, each whole in one line,
// numbered 1, 2, 3, … from the start of the program (a resumed run starts
// the program again, and the numbers with it); the program answers each
// with the same batch number and one log-reward per object, in order.
// Every object counts as one reward call.
//
//	{"batch":17,"n":3,"x":[...]}
//	{"batch":17,"log_reward":[-1.25,0.5,3]}
//
// The objects x are, by kind:
//   - sequence: strings of exactly length characters of the alphabet
//     (every token of the alphabet is one character), e.g. "ACGTTGCA";
//   - points: arrays of dim numbers, the float32 coordinates written
//     exactly (as the float64 of the same value), e.g. [0.25,-1.5];
//     points with a NaN or infinite coordinate are never sent: their
//     log-reward is NaN;
//   - grid: arrays of dim integers in 0..side-1, the cell's coordinates.
//
// Log-rewards are JSON numbers and must be finite: log R = -∞ (R = 0) is not
// allowed. A program that cannot score a batch answers
// {"batch":17,"error":"why"}, which stops the run with that message.
//
// 3. End. gfn closes the program's standard input; the program should exit.
// After a grace period (5 s by default) it is killed.
//
// A session (sequence kind; > from gfn, < from the program):
//
//	> {"protocol":"gfn-reward","version":1,"kind":"sequence","length":4,"alphabet":["A","C","G","T"]}
//	< {"ok":true}
//	> {"batch":1,"n":2,"x":["ACGT","GGCA"]}
//	< {"batch":1,"log_reward":[0,1.5]}
//	> {"batch":2,"n":1,"x":["TTTT"]}
//	< {"batch":2,"log_reward":[-2]}
//	(gfn closes standard input; the program exits)
//
// A minimal program in Python (examples/reward/my_reward.py is a fuller
// one):
//
//	import json, sys
//	shape = json.loads(sys.stdin.readline())
//	print(json.dumps({"ok": True}), flush=True)
//	for line in sys.stdin:
//	    req = json.loads(line)
//	    out = [float(s.count("G")) for s in req["x"]]
//	    print(json.dumps({"batch": req["batch"], "log_reward": out}), flush=True)
//
// A program written in Go can use Serve, the program's side of the
// protocol.
//
// # Failures
//
// Every failure stops the client for good (later calls return the same
// error) and stops the program: it exits or closes its output, it does not
// answer a batch within the timeout (Options.Timeout, 60 s by default, also
// for the handshake), it answers with a line that is not such a JSON object
// (Python's NaN and Infinity are recognised and reported as values), with
// another batch number, with the wrong number of values, or with a value
// that is NaN, infinite or not a number. The error (an *Error) names the
// batch and what came back, quoted and truncated, and the object whose
// value was bad.
//
// # Use from trainers
//
// A Client serialises its calls (it is safe for concurrent use, but gains
// nothing from it). gfn's trainers call rewards from their main loop only,
// one batch at a time: seqtrain (online batches, local search and
// evaluation; the Student and Teacher steps that run side by side do not
// call rewards), package diffusion (training, evaluation and the figure,
// one point at a time for d = 2) and package train (the exact target at
// the start, training batches and local search).
package rewardcmd

// Package tfevents writes TensorBoard event files: the scalars of a
// training curve, one Event per step, so that tensorboard --logdir shows
// them beside the runs of other libraries.
//
// An event file (events.out.tfevents.<seconds>.<host>) is a sequence of
// TFRecords: a little-endian uint64 length, the masked CRC-32C of those
// eight bytes, the data, and the masked CRC-32C of the data, where a
// CRC c is masked as ((c >> 15) | (c << 17)) + 0xa282ead8. Each record
// holds a protocol buffer Event (tensorflow/core/util/event.proto):
//
//	message Event {
//	  double wall_time = 1;
//	  int64 step = 2;
//	  oneof what { string file_version = 3; Summary summary = 5; }
//	}
//	message Summary { repeated Value value = 1; }
//	message Summary.Value { string tag = 1; float simple_value = 2; }
//
// The first Event of a file carries file_version "brain.Event:2". The
// few fields are encoded by hand (append.go), without a protobuf
// dependency; Read decodes the same subset, for tests and for a writer
// that continues a file.
//
// Files are only appended to. Open continues the newest event file of a
// directory after cutting a record torn by a crash, and reports the
// largest step it holds, so that a resumed run writes no step twice.
// The package prints nothing.
package tfevents

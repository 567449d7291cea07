package tfevents

import (
	"encoding/binary"
	"fmt"
	"math"
)

// FileVersion is the file_version of an event file's first Event.
const FileVersion = "brain.Event:2"

// Event is the subset of TensorFlow's Event message this package writes
// and reads: a file version or a summary of scalar values.
type Event struct {
	WallTime    float64 // seconds since the Unix epoch
	Step        int64
	FileVersion string   // set in a file's first Event only
	Values      []Scalar // the summary's values
}

// Scalar is one Summary.Value with a simple_value.
type Scalar struct {
	Tag   string
	Value float32
}

// Protocol buffer wire types and the fields' tags.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5

	tagWallTime    = 1<<3 | wireFixed64
	tagStep        = 2<<3 | wireVarint
	tagFileVersion = 3<<3 | wireBytes
	tagSummary     = 5<<3 | wireBytes
	tagValue       = 1<<3 | wireBytes
	tagTag         = 1<<3 | wireBytes
	tagSimpleValue = 2<<3 | wireFixed32
)

// Marshal encodes e as a protocol buffer Event: wall_time, step, then
// file_version if set, else a summary of e.Values (the oneof takes one).
func (e *Event) Marshal() []byte {
	b := []byte{tagWallTime}
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(e.WallTime))
	b = append(b, tagStep)
	b = binary.AppendUvarint(b, uint64(e.Step))
	if e.FileVersion != "" {
		return appendBytes(b, tagFileVersion, []byte(e.FileVersion))
	}
	var sum []byte
	for _, v := range e.Values {
		val := appendBytes(nil, tagTag, []byte(v.Tag))
		val = append(val, tagSimpleValue)
		val = binary.LittleEndian.AppendUint32(val, math.Float32bits(v.Value))
		sum = appendBytes(sum, tagValue, val)
	}
	return appendBytes(b, tagSummary, sum)
}

func appendBytes(b []byte, tag byte, data []byte) []byte {
	b = append(b, tag)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

// Unmarshal decodes an Event written by Marshal or by TensorFlow,
// skipping the fields outside the subset (a Summary.Value without a
// simple_value reads as 0).
func Unmarshal(b []byte) (*Event, error) {
	e := &Event{}
	err := fields(b, func(num int, wire int, v uint64, data []byte) error {
		switch {
		case num == 1 && wire == wireFixed64:
			e.WallTime = math.Float64frombits(v)
		case num == 2 && wire == wireVarint:
			e.Step = int64(v)
		case num == 3 && wire == wireBytes:
			e.FileVersion = string(data)
		case num == 5 && wire == wireBytes:
			return fields(data, func(num, wire int, _ uint64, data []byte) error {
				if num != 1 || wire != wireBytes {
					return nil
				}
				var s Scalar
				err := fields(data, func(num, wire int, v uint64, data []byte) error {
					switch {
					case num == 1 && wire == wireBytes:
						s.Tag = string(data)
					case num == 2 && wire == wireFixed32:
						s.Value = math.Float32frombits(uint32(v))
					}
					return nil
				})
				e.Values = append(e.Values, s)
				return err
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// fields calls f with each field of the message b: its number, wire
// type, and its value (varints and fixed-size values) or bytes.
func fields(b []byte, f func(num, wire int, v uint64, data []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return fmt.Errorf("tfevents: bad field key at %d bytes from the end of a message", len(b))
		}
		b = b[n:]
		num, wire := int(key>>3), int(key&7)
		var v uint64
		var data []byte
		switch wire {
		case wireVarint:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return fmt.Errorf("tfevents: field %d: bad varint", num)
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return fmt.Errorf("tfevents: field %d: %d bytes left, a fixed64 needs 8", num, len(b))
			}
			v, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return fmt.Errorf("tfevents: field %d: %d bytes left, a fixed32 needs 4", num, len(b))
			}
			v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return fmt.Errorf("tfevents: field %d: length %d exceeds the %d bytes left", num, l, len(b)-max(n, 0))
			}
			data, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return fmt.Errorf("tfevents: field %d has wire type %d, which this decoder does not read", num, wire)
		}
		if err := f(num, wire, v, data); err != nil {
			return err
		}
	}
	return nil
}

package tfevents

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The CRC-32C vectors of RFC 3720 section B.4 (TensorFlow's
// crc32c_test.cc repeats them) and the standard check value.
func TestCRC32C(t *testing.T) {
	seq, rev := make([]byte, 32), make([]byte, 32)
	for i := range seq {
		seq[i], rev[i] = byte(i), byte(31-i)
	}
	iscsi := []byte{
		0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
		0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	}
	for _, c := range []struct {
		name string
		b    []byte
		want uint32
	}{
		{"32 zeros", make([]byte, 32), 0x8a9136aa},
		{"32 0xff", bytes.Repeat([]byte{0xff}, 32), 0x62a8ab43},
		{"0..31", seq, 0x46dd794e},
		{"31..0", rev, 0x113fdb5c},
		{"iSCSI read command", iscsi, 0xd9963a56},
		{"123456789", []byte("123456789"), 0xe3069283},
		{"empty", nil, 0},
	} {
		if got := CRC32C(c.b); got != c.want {
			t.Errorf("CRC32C(%s) = %#08x, want %#08x", c.name, got, c.want)
		}
	}
}

// Masked CRCs: TensorBoard's data server test vector (the data of a real
// file_version record), and the masking's properties from TensorFlow's
// crc32c_test.cc.
func TestMaskedCRC(t *testing.T) {
	if got := MaskedCRC([]byte("\x1a\x11CRC test, one two")); got != 0x5794d08a {
		t.Errorf("masked CRC of TensorBoard's vector = %#08x, want 0x5794d08a", got)
	}
	// 0x8a9136aa rotated right by 15 bits is 0x6d55_1522, plus 0xa282ead8 modulo 2^32.
	if got, want := MaskedCRC(make([]byte, 32)), uint32(0x0fd7fffa); got != want {
		t.Errorf("masked CRC of 32 zeros = %#08x, want %#08x", got, want)
	}
	crc := CRC32C([]byte("foo"))
	if Mask(crc) == crc || Mask(Mask(crc)) == crc {
		t.Errorf("masking %#08x changes nothing", crc)
	}
	if Unmask(Mask(crc)) != crc || Unmask(Unmask(Mask(Mask(crc)))) != crc {
		t.Errorf("Unmask does not invert Mask on %#08x", crc)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	var b []byte
	for _, d := range []string{"", "a", "hello, records"} {
		b = AppendRecord(b, []byte(d))
	}
	r := bytes.NewReader(b)
	for _, want := range []string{"", "a", "hello, records"} {
		got, err := ReadRecord(r)
		if err != nil || string(got) != want {
			t.Fatalf("ReadRecord = %q, %v; want %q", got, err, want)
		}
	}
	if _, err := ReadRecord(r); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
	// A torn record and a flipped byte.
	if _, err := ReadRecord(bytes.NewReader(b[:len(b)-3])); err != nil {
		t.Fatalf("first record of a torn file: %v", err)
	}
	r = bytes.NewReader(b[:len(b)-3])
	ReadRecord(r)
	ReadRecord(r)
	if _, err := ReadRecord(r); !errors.Is(err, ErrTorn) {
		t.Errorf("torn record: %v, want ErrTorn", err)
	}
	bad := bytes.Clone(b)
	bad[len(bad)-6] ^= 1
	r = bytes.NewReader(bad)
	ReadRecord(r)
	ReadRecord(r)
	if _, err := ReadRecord(r); err == nil || errors.Is(err, ErrTorn) {
		t.Errorf("flipped byte: %v, want a checksum error", err)
	}
}

// The encoding of a known Event, byte by byte.
func TestMarshal(t *testing.T) {
	e := &Event{WallTime: 1.5, Step: 300, Values: []Scalar{{"loss", 0.25}}}
	want := []byte{
		0x09, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, // wall_time 1.5
		0x10, 0xac, 0x02, // step 300
		0x2a, 0x0d, // summary, 13 bytes
		0x0a, 0x0b, // value, 11 bytes
		0x0a, 0x04, 'l', 'o', 's', 's', // tag
		0x15, 0, 0, 0x80, 0x3e, // simple_value 0.25
	}
	if got := e.Marshal(); !bytes.Equal(got, want) {
		t.Errorf("Marshal = % x\nwant      % x", got, want)
	}
	v := (&Event{WallTime: 2, FileVersion: FileVersion}).Marshal()
	got, err := Unmarshal(v)
	if err != nil || got.FileVersion != FileVersion || got.WallTime != 2 || got.Values != nil {
		t.Errorf("file_version event round trip: %+v, %v", got, err)
	}
}

func TestWriterOpenResumes(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Unix(1700000000, 0)
	w, err := Create(dir, t0)
	if err != nil {
		t.Fatal(err)
	}
	for s := int64(0); s < 3; s++ {
		if err := w.Scalars(s*10, t0.Add(time.Duration(s)*time.Second), []Scalar{{"a", float32(s)}, {"b", -float32(s)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Scalars(20, t0, nil); err == nil {
		t.Error("a repeated step was written")
	}
	w.Close()
	// A crash during a write: a torn last record.
	path := w.Path()
	b, _ := os.ReadFile(path)
	full := len(b)
	os.WriteFile(path, append(b, AppendRecord(nil, []byte("xxxxxxxx"))[:10]...), 0o644)
	w, err = Open(dir, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if w.Path() != path || w.LastStep() != 20 {
		t.Fatalf("Open: %s, last step %d; want %s, 20", w.Path(), w.LastStep(), path)
	}
	if fi, _ := os.Stat(path); fi.Size() != int64(full) {
		t.Errorf("the torn record was not cut: %d bytes, want %d", fi.Size(), full)
	}
	if err := w.Scalars(30, t0, []Scalar{{"a", 3}}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	evs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var steps []int64
	for _, e := range evs[1:] {
		steps = append(steps, e.Step)
	}
	if evs[0].FileVersion != FileVersion || len(steps) != 4 || steps[3] != 30 || evs[2].Values[1] != (Scalar{"b", -1}) {
		t.Errorf("events: %+v (steps %v)", evs, steps)
	}
	if math.Abs(evs[2].WallTime-1700000001) > 1e-6 {
		t.Errorf("wall time %v", evs[2].WallTime)
	}
	files, _ := Files(dir)
	if len(files) != 1 || filepath.Base(files[0])[:len(Prefix)] != Prefix {
		t.Errorf("files %v", files)
	}
	if err := RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if files, _ := Files(dir); len(files) != 0 {
		t.Errorf("left %v", files)
	}
}

package safetensors_test

import (
	"bytes"
	"fmt"

	"github.com/gfngo/gfn/safetensors"
)

func ExampleWrite() {
	var buf bytes.Buffer
	err := safetensors.Write(&buf, []safetensors.Tensor{
		safetensors.F32("layer.weight", []int{2, 2}, []float32{1, 0, 0, 1}),
	}, map[string]string{"format": "pt"})
	if err != nil {
		panic(err)
	}
	ts, meta, _ := safetensors.Read(&buf)
	v, _ := ts[0].Float32s()
	fmt.Println(ts[0].Name, ts[0].Shape, v, meta["format"])
	// Output: layer.weight [2 2] [1 0 0 1] pt
}

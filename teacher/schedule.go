package teacher

import (
	"fmt"
	"strconv"
	"strings"
)

// Role is what one iteration samples from.
type Role byte

// The roles.
const (
	Student Role = 'S' // a fresh batch of the Student's (with its exploration)
	Teacher Role = 'T' // a fresh batch of the Teacher's
	Buffer  Role = 'B' // a draw from the replay buffer
)

// Schedule is a cycle of roles, e.g. "SSTT" (the grid's Teacher), "STSB"
// (the diffusion reference's Teacher). Iteration i has role s[i mod len(s)].
type Schedule string

// Role returns the role of iteration i.
func (s Schedule) Role(i int) Role { return Role(s[i%len(s)]) }

// Count returns how many slots of the cycle have role r.
func (s Schedule) Count(r Role) int { return strings.Count(string(s), string(r)) }

// Validate reports a schedule that is empty, has other letters, never
// samples from a policy, or uses a Teacher or buffer the run does not have.
func (s Schedule) Validate(teacher, buffer bool) error {
	switch {
	case s == "":
		return fmt.Errorf("teacher: schedule is empty (roles: S Student, T Teacher, B buffer)")
	case strings.Trim(string(s), "STB") != "":
		return fmt.Errorf("teacher: schedule %q may only contain S (Student), T (Teacher) and B (buffer)", string(s))
	case s.Count(Student)+s.Count(Teacher) == 0:
		return fmt.Errorf("teacher: schedule %q never samples from a policy", string(s))
	case !teacher && s.Count(Teacher) > 0:
		return fmt.Errorf("teacher: schedule %q uses a Teacher, and the run has none", string(s))
	case !buffer && s.Count(Buffer) > 0:
		return fmt.Errorf("teacher: schedule %q replays from a buffer, and the run has none", string(s))
	}
	return nil
}

// FromRatio turns a Student:Teacher:Buffer ratio such as "2:1:3" into a
// cycle: the Student slots, then the Teacher slots, with the buffer slots
// spread evenly after them ("1:1:2" gives "SBTB", the grid reference's
// schedule with a buffer; "2:1:3" gives "SBSBTB"; "2:1:1" gives "SSTB").
func FromRatio(ratio string) (Schedule, error) {
	parts := strings.Split(ratio, ":")
	if len(parts) != 3 {
		return "", fmt.Errorf("teacher: ratio %q must have the form S:T:B, like 1:1:0", ratio)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return "", fmt.Errorf("teacher: ratio %q must have the form S:T:B with counts >= 0", ratio)
		}
		n[i] = v
	}
	pol := strings.Repeat("S", n[0]) + strings.Repeat("T", n[1])
	if pol == "" {
		return "", fmt.Errorf("teacher: ratio %q never samples from a policy", ratio)
	}
	var b strings.Builder
	p, c := len(pol), n[2]
	for i := range p {
		b.WriteByte(pol[i])
		b.WriteString(strings.Repeat("B", (i+1)*c/p-i*c/p))
	}
	return Schedule(b.String()), nil
}

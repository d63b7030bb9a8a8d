package c2x86

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

// The driver calls the item's function through a shim that poisons what
// the SysV ABI leaves undefined at a call: the integer and vector argument
// registers the function's parameters do not use, rax, r10, r11, xmm8-15,
// and the 512 bytes of stack below the return address. Without it, an
// answer that reads a register or stack slot it never wrote gets whatever
// the driver or the C library left there, which depends on ASLR and the
// environment: the verdict would pass or fail by luck, and a peer's answer
// missing one instruction could pass once and fail on the next run. With
// it, such an answer reads a fixed pattern and fails every time.

// poisonPattern fills the poisoned integer registers and stack; vector
// registers are filled with all ones (a NaN for float and double).
const poisonPattern = "0xa5a5a5a5a5a5a5a5"

// poisonStackBytes is how far below the shim's stack pointer the pattern
// is written (the callee's red zone and first frames).
const poisonStackBytes = 512

// shimSymbol is the name the driver's call is redirected to.
func shimSymbol(function string) string { return "__kiln_poison_" + function }

// Poison describes the shim a reference uses, for stage details.
type Poison struct {
	// IntArgs and VecArgs are the argument registers the function's
	// parameters occupy (integer class, SSE class).
	IntArgs, VecArgs int
	// Off says why no shim is used ("" when one is).
	Off string
}

func (p Poison) String() string {
	if p.Off != "" {
		return "no register poisoning (" + p.Off + ")"
	}
	return fmt.Sprintf("unused argument registers, rax, r10, r11, xmm8-15 and %d bytes of stack poisoned at the call (%d integer, %d vector arguments)",
		poisonStackBytes, p.IntArgs, p.VecArgs)
}

var intArgRegs = []string{"rdi", "rsi", "rdx", "rcx", "r8", "r9"}

// poisonShim returns the assembly of the shim for function with the given
// argument register counts: it poisons, then jumps to the function (the
// function returns straight to the driver).
func poisonShim(function string, p Poison) string {
	var b strings.Builder
	sym := shimSymbol(function)
	fmt.Fprintf(&b, "\t.text\n\t.globl\t%s\n\t.type\t%s, @function\n%s:\n", sym, sym, sym)
	fmt.Fprintf(&b, "\tmovabsq\t$%s, %%rax\n", poisonPattern)
	// The stack below the return address: r11 walks up to rsp.
	fmt.Fprintf(&b, "\tleaq\t-%d(%%rsp), %%r11\n", poisonStackBytes)
	b.WriteString("1:\tmovq\t%rax, (%r11)\n\taddq\t$8, %r11\n\tcmpq\t%rsp, %r11\n\tjb\t1b\n")
	for _, r := range append(intArgRegs[p.IntArgs:], "r10", "r11") {
		fmt.Fprintf(&b, "\tmovq\t%%rax, %%%s\n", r)
	}
	for i := p.VecArgs; i < 16; i++ {
		fmt.Fprintf(&b, "\tpcmpeqd\t%%xmm%d, %%xmm%d\n", i, i)
	}
	fmt.Fprintf(&b, "\tjmp\t%s\n\t.size\t%s, .-%s\n\t.section\t.note.GNU-stack,\"\",@progbits\n", function, sym, sym)
	return b.String()
}

// intTypeWords are the words of C scalar types passed in integer registers.
var intTypeWords = map[string]bool{
	"char": true, "short": true, "int": true, "long": true, "unsigned": true, "signed": true,
	"_Bool": true, "bool": true, "size_t": true, "ssize_t": true, "ptrdiff_t": true,
	"intptr_t": true, "uintptr_t": true, "int8_t": true, "int16_t": true, "int32_t": true,
	"int64_t": true, "uint8_t": true, "uint16_t": true, "uint32_t": true, "uint64_t": true,
	"wchar_t": true, "off_t": true, "time_t": true,
}

// qualifierWords carry no class.
var qualifierWords = map[string]bool{"const": true, "volatile": true, "restrict": true, "register": true}

var paramWordRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// paramClasses finds the definition of function in src and counts its
// parameters by ABI class. Anything it cannot classify for sure (structs
// or unions by value, long double, __int128, function pointers written
// without a typedef, unknown typedef names, variadic functions, K&R
// definitions) turns the shim off, with the reason.
func paramClasses(src, function string) Poison {
	def := regexp.MustCompile(`(?m)(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(function) + `\s*\(([^()]*)\)\s*\{`)
	clean := stripComments(src)
	loc := def.FindStringSubmatchIndex(clean)
	if loc == nil {
		return Poison{Off: "definition of " + function + " not found in function.c"}
	}
	params := strings.TrimSpace(clean[loc[4]:loc[5]])
	var p Poison
	if mayReturnInMemory(clean[:loc[0]+len(clean[loc[2]:loc[3]])]) {
		p.IntArgs++ // the hidden pointer to the result, in rdi
	}
	if params == "" || params == "void" {
		return p
	}
	for _, param := range strings.Split(params, ",") {
		param = strings.TrimSpace(param)
		if param == "..." {
			return Poison{Off: "variadic"}
		}
		if strings.ContainsAny(param, "*[") {
			p.IntArgs++
			continue
		}
		words := paramWordRE.FindAllString(param, -1)
		class := ""
		for i, w := range words {
			switch {
			case qualifierWords[w]:
			case w == "float" || w == "double":
				if class == "long" { // long double
					return Poison{Off: "long double parameter"}
				}
				class = "vec"
			case w == "long" && class == "":
				class = "long"
			case intTypeWords[w] || w == "enum":
				if class == "" {
					class = "int"
				}
				if w == "enum" && i+1 < len(words) {
					words[i+1] = "int" // the tag name
				}
			case i == len(words)-1 && class != "":
				// the parameter's name
			default:
				return Poison{Off: fmt.Sprintf("parameter %q not classified", param)}
			}
		}
		switch class {
		case "vec":
			p.VecArgs++
		case "int", "long":
			p.IntArgs++
		default:
			return Poison{Off: fmt.Sprintf("parameter %q not classified", param)}
		}
	}
	if p.IntArgs > len(intArgRegs) || p.VecArgs > 8 {
		return Poison{Off: "arguments passed on the stack"}
	}
	return p
}

// storageWords precede a return type.
var storageWords = map[string]bool{"static": true, "inline": true, "extern": true, "__inline__": true}

// mayReturnInMemory reports whether the return type before a function's
// name (the end of prefix) may be a struct or union returned through a
// hidden pointer argument: a struct, union or unknown type name by value.
// Counting one argument register too many only poisons one register
// fewer; counting one too few would poison an argument.
func mayReturnInMemory(prefix string) bool {
	if i := strings.LastIndexAny(prefix, ";}"); i >= 0 {
		prefix = prefix[i+1:]
	}
	var words []string
	for _, line := range strings.Split(prefix, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			if strings.Contains(line, "*") {
				return false // a pointer
			}
			words = append(words, paramWordRE.FindAllString(line, -1)...)
		}
	}
	for _, w := range words {
		switch {
		case qualifierWords[w], storageWords[w], intTypeWords[w], w == "void", w == "float", w == "double":
		default:
			return true
		}
	}
	return false
}

var commentRE = regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`)

func stripComments(src string) string { return commentRE.ReplaceAllString(src, " ") }

// addPoisonShim assembles the shim for function and links it into the
// box's driver.o, whose calls to function now go through the shim.
func (l *Lane) addPoisonShim(ctx context.Context, box *sandboxes.Box, function string, p Poison) error {
	const shimAsm, shimObj, plainDriver = "poison_shim.s", "poison_shim.o", "driver_plain.o"
	if err := box.WriteFile(shimAsm, []byte(poisonShim(function, p)), 0o644); err != nil {
		return fmt.Errorf("c2x86 reference: %w", err)
	}
	steps := [][]string{
		{l.cfg.AS, "--64", "-o", shimObj, shimAsm},
		{l.cfg.Objcopy, "--redefine-sym", function + "=" + shimSymbol(function), driverObj, plainDriver},
		{l.cfg.LD, "-r", "-o", driverObj, plainDriver, shimObj},
	}
	for _, argv := range steps {
		res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Limits: l.cfg.BuildLimits})
		if err != nil {
			return fmt.Errorf("c2x86 reference: poisoning shim: %s: %w", argv[0], err)
		}
		if !res.OK() {
			return fmt.Errorf("c2x86 reference: poisoning shim: %s: %s: %s", strings.Join(argv, " "), res.Describe(),
				firstLines(string(res.Stderr), l.cfg.DiagnosticLines))
		}
	}
	return nil
}

// poisonDriver puts the shim into the box's driver.o when the function's
// parameters classify, and checks it on the reference: built with the
// shimmed driver, the reference program must print what it printed with
// the plain one (want). A shim that changes it (a parameter counted
// wrong) is dropped, with the reason, and the plain driver.o is put back.
func (l *Lane) poisonDriver(ctx context.Context, box *sandboxes.Box, item tools.Item, asm string, want sandboxes.Result) Poison {
	function := item.Meta["function"]
	if function == "" {
		return Poison{Off: "no function name in the item"}
	}
	p := paramClasses(item.Files["function.c"], function)
	if p.Off != "" {
		return p
	}
	plain, err := box.ReadFile(driverObj, 64<<20)
	if err != nil {
		return Poison{Off: "reading driver.o: " + err.Error()}
	}
	off := func(why string) Poison {
		if err := box.WriteFile(driverObj, plain, 0o644); err != nil {
			why += "; restoring driver.o: " + err.Error()
		}
		return Poison{Off: why}
	}
	if err := l.addPoisonShim(ctx, box, function, p); err != nil {
		return off(err.Error())
	}
	shimmed, err := box.ReadFile(driverObj, 64<<20)
	if err != nil {
		return off("reading driver.o: " + err.Error())
	}
	runs, err := l.runReference(ctx, box, asm, shimmed)
	switch {
	case err != nil:
		return off("the reference fails with the shim: " + firstLines(err.Error(), 2))
	case !bytes.Equal(runs[0].Stdout, want.Stdout) || runs[0].ExitCode != want.ExitCode:
		return off("the shim changes the reference's output")
	}
	if err := box.WriteFile(driverObj, shimmed, 0o644); err != nil {
		return off("writing driver.o: " + err.Error())
	}
	return p
}

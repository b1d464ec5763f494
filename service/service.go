package service

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"

	"concbench/internal/monoclock"
	"concbench/wire"
)

// Configuration defaults and bounds.
const (
	DefaultAccounts       = 1024
	DefaultInitialBalance = 1000
	MaxAccounts           = 1 << 20
	// MaxInitialBalance keeps the initial total, at most MaxAccounts ×
	// MaxInitialBalance = 2^60, an eighth of math.MaxInt64, leaving room
	// for deposits.
	MaxInitialBalance = 1 << 40
	minNsPerIter      = 1e-3
	maxNsPerIter      = 1e6
)

// Config configures a Service. The zero value of a field means its default.
type Config struct {
	// Accounts is the number of ledger accounts, ids 0..Accounts-1;
	// default DefaultAccounts, range 1..MaxAccounts.
	Accounts int
	// InitialBalance is every account's balance at start; default
	// DefaultInitialBalance, range 1..MaxInitialBalance (0 means the
	// default, so a ledger of empty accounts is made with NewMonitor).
	InitialBalance int64
	// NsPerIter, if positive, is used as the calibration instead of
	// measuring one (tests; reproducing a recorded run on the same
	// machine). Range 0.001..1e6 ns.
	NsPerIter float64
	// Trace, if not nil, records every request Do serves (concbench serve
	// --trace). Nil, the default, costs Do one nil check.
	Trace *Trace
}

// WithDefaults returns c with zero fields replaced by their defaults.
func (c Config) WithDefaults() Config {
	c.Accounts = cmp.Or(c.Accounts, DefaultAccounts)
	c.InitialBalance = cmp.Or(c.InitialBalance, DefaultInitialBalance)
	return c
}

// Validate reports the first field of c (after defaults) outside its range,
// naming the value and the accepted range.
func (c Config) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Accounts < 1 || c.Accounts > MaxAccounts:
		return fmt.Errorf("service: accounts %d out of range (accepted: 0 for the default %d, or 1..%d)",
			c.Accounts, DefaultAccounts, MaxAccounts)
	case c.InitialBalance < 0 || c.InitialBalance > MaxInitialBalance:
		return fmt.Errorf("service: initial balance %d out of range (accepted: 0 for the default %d, or 1..%d)",
			c.InitialBalance, DefaultInitialBalance, int64(MaxInitialBalance))
	case c.NsPerIter != 0 && !(c.NsPerIter >= minNsPerIter && c.NsPerIter <= maxNsPerIter):
		// The negated form also rejects NaN.
		return fmt.Errorf("service: ns per iteration %v out of range (accepted: 0 to measure, or %g..%g)",
			c.NsPerIter, minNsPerIter, maxNsPerIter)
	}
	return nil
}

// Calibration is the measured (or given) cost of the CPU-work loop on this
// machine: what converts a request's CPU work in nanoseconds into an
// iteration count. Record it with every result: two runs compare only if
// their requests did the same work.
type Calibration struct {
	NsPerIter  float64 // median ns per iteration over the samples
	Min, Max   float64 // the fastest and slowest sample, ns per iteration
	Samples    int     // number of timed samples (0 if not measured)
	Iterations int     // iterations per sample
	Measured   bool    // false when taken from Config.NsPerIter
}

// Service is the application every model runs, identical across models: CPU
// work, blocking work, and the ledger behind a monitor object. It is safe
// for concurrent use by any number of threads.
type Service struct {
	cfg    Config
	cal    Calibration
	ledger *Monitor
}

// New validates cfg and returns a Service. Unless cfg.NsPerIter is set it
// calibrates the CPU work first, which takes about 25 ms of CPU: call it
// before the server starts taking load, on an otherwise idle machine.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	s := &Service{
		cfg:    cfg,
		ledger: NewMonitor(uint32(cfg.Accounts), cfg.InitialBalance),
	}
	if cfg.NsPerIter > 0 {
		s.cal = Calibration{NsPerIter: cfg.NsPerIter, Min: cfg.NsPerIter, Max: cfg.NsPerIter}
	} else {
		s.cal = calibrate()
	}
	return s, nil
}

// Config returns the service's configuration with defaults filled in.
func (s *Service) Config() Config { return s.cfg }

// Calibration returns the calibration the service converts CPU work with.
func (s *Service) Calibration() Calibration { return s.cal }

// Ledger returns the service's ledger, the monitor object Do uses.
func (s *Service) Ledger() *Monitor { return s.ledger }

// Do performs req and fills resp: ID and Close copied from req, Status, and
// Payload. It does not allocate once scratch has room for the payload.
//
// Every defined operation first runs the request's work spec,
// Work(req.CPU, req.Block) (zero for a plain ledger request), outside any
// lock. Then:
//   - OpWork: the payload is wire.AppendBody(req.ID, req.Size), appended
//     to scratch up to wire.MaxInlineBody bytes; a larger body is not
//     materialised: resp.Pattern = req.Size and the payload is empty (the
//     caller's encoder streams it);
//   - the ledger operations run on the Monitor (Withdraw waits up to
//     req.Timeout for funds) and the payload is the resulting balance —
//     Account's for a transfer, the sum of all balances for OpTotal — in
//     decimal ASCII; on an error the status is StatusOf(err) and the payload
//     is empty;
//   - an unknown operation gets StatusBadRequest and an empty payload, and
//     no work is done.
//
// Ownership: the payload is appended to scratch; Do returns the extended
// slice, and resp.Payload aliases its tail. Both stay valid until the caller
// reuses scratch. resp.Checksum and HasChecksum are cleared (encoders
// compute the checksum).
func (s *Service) Do(req *wire.Request, resp *wire.Response, scratch []byte) []byte {
	// The one hook of the trace (Config.Trace) in every model that serves
	// through Do: its service is Do's whole work, from the decoded request
	// to the filled response.
	if t := s.cfg.Trace; t != nil {
		start := monoclock.Now()
		scratch = s.do(req, resp, scratch)
		t.add(req.ID, start, monoclock.Now())
		return scratch
	}
	return s.do(req, resp, scratch)
}

// do is Do without the trace.
func (s *Service) do(req *wire.Request, resp *wire.Response, scratch []byte) []byte {
	resp.ID = req.ID
	resp.Close = req.Close
	resp.Checksum, resp.HasChecksum = 0, false
	resp.Pattern = 0
	if !req.Op.Valid() {
		resp.Status = wire.StatusBadRequest
		resp.Payload = scratch[len(scratch):]
		return scratch
	}
	s.Work(req.CPU, req.Block)
	var v int64
	var err error
	switch req.Op {
	case wire.OpWork:
		resp.Status = wire.StatusOK
		if req.Size > wire.MaxInlineBody {
			resp.Pattern = req.Size
			resp.Payload = scratch[len(scratch):]
			return scratch
		}
		start := len(scratch)
		scratch = wire.AppendBody(scratch, req.ID, req.Size)
		resp.Status = wire.StatusOK
		resp.Payload = scratch[start:]
		return scratch
	case wire.OpBalance:
		v, err = s.ledger.Balance(req.Account)
	case wire.OpDeposit:
		v, err = s.ledger.Deposit(req.Account, req.Amount)
	case wire.OpWithdraw:
		v, err = s.ledger.Withdraw(req.Account, req.Amount, req.Timeout)
	case wire.OpTransfer:
		v, err = s.ledger.Transfer(req.Account, req.To, req.Amount)
	case wire.OpTotal:
		v = s.ledger.Total()
	default:
		// Valid but not handled here: a new wire.Op without a case.
		err = errUnhandledOp
	}
	return AppendResult(resp, scratch, v, err)
}

// errUnhandledOp is a wire.Op that Valid accepts but Do has no case for; it
// maps to StatusInternal (a server bug).
var errUnhandledOp = errors.New("service: unhandled op")

// AppendResult fills resp.Status and resp.Payload for the outcome (v, err)
// of a ledger operation exactly as Do does: on success StatusOK and v in
// decimal ASCII appended to scratch, otherwise StatusOf(err) and an empty
// payload. It returns the extended scratch, which resp.Payload aliases. A
// model that runs ledger operations on its own servant (Active Object) uses
// it so that its responses are byte-identical to the other models'.
func AppendResult(resp *wire.Response, scratch []byte, v int64, err error) []byte {
	start := len(scratch)
	resp.Status = StatusOf(err)
	resp.Pattern = 0
	if err == nil {
		scratch = strconv.AppendInt(scratch, v, 10)
	}
	resp.Payload = scratch[start:]
	return scratch
}

// The bounds keep the initial total in int64: this fails to compile if
// MaxAccounts × MaxInitialBalance exceeds math.MaxInt64.
const _ uint64 = math.MaxInt64 - MaxAccounts*MaxInitialBalance

package service_test

import (
	"fmt"
	"log"

	"concbench/service"
	"concbench/wire"
)

func ExampleService_Do() {
	// NsPerIter skips the calibration; a server leaves it zero to measure.
	s, err := service.New(service.Config{Accounts: 4, InitialBalance: 100, NsPerIter: 1})
	if err != nil {
		log.Fatal(err)
	}
	var resp wire.Response
	var scratch []byte // grown once, reused for every response
	for _, req := range []wire.Request{
		{ID: 1, Op: wire.OpDeposit, Account: 2, Amount: 50},
		{ID: 2, Op: wire.OpTransfer, Account: 2, To: 3, Amount: 120},
		{ID: 3, Op: wire.OpBalance, Account: 3},
		{ID: 4, Op: wire.OpWithdraw, Account: 0, Amount: 500},
		{ID: 5, Op: wire.OpTotal},
		{ID: 6, Op: wire.OpWork, Size: 8},
	} {
		scratch = s.Do(&req, &resp, scratch[:0])
		fmt.Printf("%d %v: %v %q\n", resp.ID, req.Op, resp.Status, resp.Payload)
	}
	fmt.Println("audit:", s.Ledger().Audit())
	// Output:
	// 1 deposit: ok "150"
	// 2 transfer: ok "30"
	// 3 balance: ok "220"
	// 4 withdraw: insufficient_funds ""
	// 5 total: ok "450"
	// 6 work: ok "GHIJKLMN"
	// audit: <nil>
}

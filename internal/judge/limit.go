// Copyright agenteval-collector contributors
// SPDX-License-Identifier: Apache-2.0

package judge // import "github.com/agenteval/agenteval-collector/internal/judge"

import (
	"fmt"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/agenteval/agenteval-collector/internal/text"
)

// limitResponses is openai-go middleware that bounds every response body, successful or
// not, to limit bytes: reading past them (or a body whose Content-Length already does)
// fails with ErrResponseTooLarge, which openai-go returns as the call's error without
// retrying.
func limitResponses(limit int64) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		res, err := next(req)
		if err == nil && res != nil && res.Body != nil {
			res.Body = &limitedBody{ReadCloser: res.Body, r: io.LimitReader(res.Body, limit+1), limit: limit,
				declared: res.ContentLength}
		}
		return res, err
	}
}

// limitedBody reads at most limit bytes of a response body.
type limitedBody struct {
	io.ReadCloser // the body, closed by Close
	r             io.Reader
	limit, read   int64
	declared      int64 // Content-Length, -1 when unknown
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.declared > b.limit {
		return 0, b.tooLarge()
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	if b.read > b.limit {
		return n - int(b.read-b.limit), b.tooLarge()
	}
	return n, err
}

func (b *limitedBody) tooLarge() error {
	return fmt.Errorf("%w: over %d bytes", ErrResponseTooLarge, b.limit)
}

// CapReason caps a verdict's reason at MaxReasonBytes, for what reaches spans and rows.
func CapReason(s string) string { return text.Cap(s, MaxReasonBytes) }

// CapErrorText caps an error's text at MaxErrorBytes, for what reaches spans and rows.
func CapErrorText(s string) string { return text.Cap(s, MaxErrorBytes) }

// cappedError is an error whose text is capped at MaxErrorBytes (an API error quoting a
// long body); errors.Is and errors.As still see the error it wraps.
type cappedError struct {
	msg string
	err error
}

func (e *cappedError) Error() string { return e.msg }
func (e *cappedError) Unwrap() error { return e.err }

// capError returns err, wrapped so that its text is at most MaxErrorBytes when longer.
func capError(err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); len(msg) > MaxErrorBytes {
		return &cappedError{msg: CapErrorText(msg), err: err}
	}
	return err
}

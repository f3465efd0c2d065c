package main

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"sync"
)

// prefixCache models vLLM's automatic prefix caching over full blocks of prompt tokens, so that a
// benchmark can check the hit rate its workload implies against the server's own counters.
//
// As vLLM V1 counts them: every admitted request queries its prompt tokens
// (vllm:prefix_cache_queries_total) and hits the tokens of its longest prefix of full blocks
// already cached (vllm:prefix_cache_hits_total), at most all but the last token (vLLM always
// computes the last prompt token). A block is identified by its tokens and the blocks before it,
// so equal blocks after different prefixes do not match. The request's full blocks are cached
// when it is admitted (vLLM caches them once prefilled; the simulator has no prefill to wait for),
// and nothing is evicted: the cache is as large as it needs to be until /reset_prefix_cache.
type prefixCache struct {
	blockSize int
	mu        sync.Mutex
	blocks    map[uint64]struct{}
	queries   counter
	hits      counter
	resets    counter
	refused   counter
}

func newPrefixCache(blockSize int) *prefixCache {
	return &prefixCache{blockSize: blockSize, blocks: map[uint64]struct{}{}}
}

// admit looks the prompt up, counts the query and its hits, caches its full blocks, and returns
// the hit tokens.
func (c *prefixCache) admit(tokens []string) int {
	n := len(tokens)
	limit := 0
	if n > 0 {
		limit = (n - 1) / c.blockSize // blocks that may hit: all but the last token's
	}
	hashes := c.chain(tokens)
	c.mu.Lock()
	hit := 0
	for hit < limit && hit < len(hashes) {
		if _, ok := c.blocks[hashes[hit]]; !ok {
			break
		}
		hit++
	}
	for _, h := range hashes {
		c.blocks[h] = struct{}{}
	}
	c.mu.Unlock()
	c.queries.add(float64(n))
	c.hits.add(float64(hit * c.blockSize))
	return hit * c.blockSize
}

// chain hashes each full block with the hash of the blocks before it.
func (c *prefixCache) chain(tokens []string) []uint64 {
	full := len(tokens) / c.blockSize
	hashes := make([]uint64, full)
	var parent uint64
	var buf [8]byte
	for b := 0; b < full; b++ {
		h := fnv.New64a()
		binary.LittleEndian.PutUint64(buf[:], parent)
		h.Write(buf[:])
		for _, t := range tokens[b*c.blockSize : (b+1)*c.blockSize] {
			h.Write([]byte(t))
			h.Write([]byte{0})
		}
		parent = h.Sum64()
		hashes[b] = parent
	}
	return hashes
}

// reset empties the cache and counts the reset.
func (c *prefixCache) reset() {
	c.mu.Lock()
	c.blocks = map[uint64]struct{}{}
	c.mu.Unlock()
	c.resets.add(1)
}

// promptTokens is the prompt as the simulator's tokenizer sees it: its token ids, or the words of
// its texts (all messages of a chat, in order).
func promptTokens(p prompt) []string {
	if p.echoIDs != nil {
		out := make([]string, len(p.echoIDs))
		for i, id := range p.echoIDs {
			out[i] = "#" + strconv.FormatInt(id, 10)
		}
		return out
	}
	texts := p.texts
	if texts == nil && p.echoText != "" {
		texts = []string{p.echoText}
	}
	var out []string
	for _, t := range texts {
		out = appendWords(out, t)
	}
	return out
}

// appendWords splits text where countTokens does: one token per run of non-space bytes.
func appendWords(out []string, text string) []string {
	start := -1
	for i := 0; i <= len(text); i++ {
		space := i == len(text)
		if !space {
			c := text[i]
			space = c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
		}
		if space && start >= 0 {
			out = append(out, text[start:i])
			start = -1
		} else if !space && start < 0 {
			start = i
		}
	}
	return out
}

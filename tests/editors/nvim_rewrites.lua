-- A Neovim session driven from tests/editors/test_neovim.py: the plugin in editors/neovim
-- starts `capture serve`, an "agent" replaces one expression in three buffers, and the user
-- types over it (rewrites it), wraps it, or retypes the old text. Nothing is ever saved: the
-- server judges the unsaved buffers.
local support = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'nvim_support.lua')
local NAMES = { 'rewritten.py', 'wrapped.py', 'reverted.py' }
-- Line 2 is "    return 0": the expression `0` is at (0-based) row 1, byte columns 11 to 12.
local ROW, COL = 1, 11
local NEW = 'sum(items)'

local function run()
  local capture = support.start()
  local meta = { agent = 'nvim-agent', model = 'test-model', sessionId = 's2', turnId = 't1' }
  local bufs = {}
  for _, name in ipairs(NAMES) do
    local buf = support.open(capture, name)
    bufs[name] = buf
    -- The agent replaces only the expression `0` of line 2 by `sum(items)`.
    capture.apply_agent_edit(buf, ROW, COL, ROW, COL + 1, NEW, vim.tbl_extend('force', meta, { id = name }))
  end
  -- rewritten.py: the user types a new expression over the agent's, to the end of the line.
  vim.cmd('buffer ' .. bufs['rewritten.py'])
  vim.api.nvim_win_set_cursor(0, { ROW + 1, COL })
  vim.cmd('normal! Cfunctools.reduce(operator.add, items, 0)')
  -- wrapped.py: the user wraps it, `int(` right before and `)` right after.
  vim.cmd('buffer ' .. bufs['wrapped.py'])
  vim.api.nvim_win_set_cursor(0, { ROW + 1, COL })
  vim.cmd('normal! iint(')
  vim.api.nvim_win_set_cursor(0, { ROW + 1, COL + #'int(' + #NEW - 1 })
  vim.cmd('normal! a)')
  -- reverted.py: the user retypes the old text over it (typing, not the plugin's undo).
  vim.cmd('buffer ' .. bufs['reverted.py'])
  vim.api.nvim_win_set_cursor(0, { ROW + 1, COL })
  vim.cmd('normal! C0')
  local expected = {
    ['rewritten.py'] = '    return functools.reduce(operator.add, items, 0)',
    ['wrapped.py'] = '    return int(sum(items))',
    ['reverted.py'] = '    return 0',
  }
  for name, line in pairs(expected) do
    local got = vim.api.nvim_buf_get_lines(bufs[name], ROW, ROW + 1, false)[1]
    assert(got == line, name .. ': line 2 is ' .. vim.inspect(got))
  end
  support.settle(capture, bufs['rewritten.py'], 3)
  for _, buf in pairs(bufs) do
    assert(vim.api.nvim_buf_get_option(buf, 'modified'), 'a buffer was saved')
  end
end

support.exit_after(run)

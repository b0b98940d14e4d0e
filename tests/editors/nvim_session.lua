-- A Neovim session driven from tests/editors/test_neovim.py: the plugin in editors/neovim
-- starts `capture serve`, an "agent" edits three buffers, the user keeps, edits and undoes.
local support = dofile(debug.getinfo(1, 'S').source:sub(2):match('(.*/)') .. 'nvim_support.lua')
local NEW = '    result = 0\n    for item in items:\n        result += item\n    return result\n'

local function run()
  local capture = support.start()
  local meta = { agent = 'nvim-agent', model = 'test-model', sessionId = 's1', turnId = 't1' }
  local bufs = {}
  for _, name in ipairs({ 'kept.py', 'edited.py', 'undone.py' }) do
    local buf = support.open(capture, name)
    bufs[name] = buf
    -- The agent replaces line 2 ("    return 0").
    capture.apply_agent_edit(buf, 1, 0, 2, 0, NEW, vim.tbl_extend('force', meta, { id = name }))
  end
  -- The user rewrites the loop of edited.py in normal mode...
  vim.cmd('buffer ' .. bufs['edited.py'])
  vim.api.nvim_win_set_cursor(0, { 3, 4 })
  vim.cmd('normal! Cwhile items:')
  vim.api.nvim_win_set_cursor(0, { 4, 8 })
  vim.cmd('normal! Cresult += items.pop()')
  -- ...undoes the agent's edit of undone.py...
  capture.undo(bufs['undone.py'])
  -- ...adds a comment above the kept one, and saves everything.
  vim.cmd('buffer ' .. bufs['kept.py'])
  vim.api.nvim_buf_set_lines(bufs['kept.py'], 0, 0, false, { '# reviewed' })
  vim.cmd('silent wall')
  support.settle(capture, bufs['kept.py'], 3)
end

support.exit_after(run)

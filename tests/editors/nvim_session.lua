-- A Neovim session driven from tests/editors/test_neovim.py: the plugin in editors/neovim
-- starts `capture serve`, an "agent" edits three buffers, the user keeps, edits and undoes.
local env = vim.env
local root = env.CAPTURE_TEST_ROOT
local NEW = '    result = 0\n    for item in items:\n        result += item\n    return result\n'

local function run()
  local capture = require('capture')
  capture.setup({
    cmd = { env.CAPTURE_TEST_PYTHON, '-m', 'capture', 'serve' },
  })
  local meta = { agent = 'nvim-agent', model = 'test-model', sessionId = 's1', turnId = 't1' }
  local bufs = {}
  for _, name in ipairs({ 'kept.py', 'edited.py', 'undone.py' }) do
    vim.cmd('edit ' .. root .. '/' .. name)
    local buf = vim.api.nvim_get_current_buf()
    bufs[name] = buf
    assert(vim.wait(20000, function()
      local c = capture.client(buf)
      return c ~= nil and c.initialized
    end, 20), 'the agent-capture client did not start for ' .. name)
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
  local done, asking = false, false
  assert(vim.wait(20000, function()
    if not asking then
      asking = true
      capture.stats(bufs['kept.py'], function(stats)
        asking = false
        done = stats ~= nil and stats.proposals >= 3 and stats.outcomes.pending == 0
      end)
    end
    return done
  end, 50), 'the proposals did not settle')
end

local ok, err = pcall(run)
if not ok then
  io.stderr:write('nvim session failed: ' .. tostring(err) .. '\n')
  vim.cmd('cquit 1')
end
vim.cmd('qall!')

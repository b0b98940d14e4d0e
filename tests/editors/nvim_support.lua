-- What the Neovim sessions of tests/editors share: starting `capture serve` through
-- editors/neovim, opening a buffer with its client, waiting for the proposals to settle, and
-- exiting with a status the test reads.
local M = {}

function M.start()
  local capture = require('capture')
  capture.setup({ cmd = { vim.env.CAPTURE_TEST_PYTHON, '-m', 'capture', 'serve' } })
  return capture
end

function M.open(capture, name)
  vim.cmd('edit ' .. vim.env.CAPTURE_TEST_ROOT .. '/' .. name)
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.wait(20000, function()
    local c = capture.client(buf)
    return c ~= nil and c.initialized
  end, 20), 'the agent-capture client did not start for ' .. name)
  return buf
end

-- Wait until the server holds `count` proposals or more, none of them pending.
function M.settle(capture, buf, count)
  local done, asking = false, false
  assert(vim.wait(20000, function()
    if not asking then
      asking = true
      capture.stats(buf, function(stats)
        asking = false
        done = stats ~= nil and stats.proposals >= count and stats.outcomes.pending == 0
      end)
    end
    return done
  end, 50), 'the proposals did not settle')
end

function M.exit_after(run)
  local ok, err = pcall(run)
  if not ok then
    io.stderr:write('nvim session failed: ' .. tostring(err) .. '\n')
    vim.cmd('cquit 1')
  end
  vim.cmd('qall!')
end

return M

-- agent-capture for Neovim: starts `capture serve` for the buffers of each workspace and lets
-- agent plugins report the edits they make.
--
--   require('capture').setup{}                 -- every buffer backed by a file
--   require('capture').setup{ filetypes = { 'python', 'lua' }, cmd = { 'capture', 'serve' } }
--
-- Neovim 0.11+ registers the server with vim.lsp.config / vim.lsp.enable; older versions
-- (0.7 to 0.10) start it with vim.lsp.start_client, one client per workspace root.

local M = {}

local defaults = {
  name = 'agent-capture',
  cmd = { 'capture', 'serve' },
  filetypes = nil, -- nil: every buffer backed by a file
  root_markers = { '.git' },
  -- didChange is sent at once rather than debounced, so that a reported edit never reaches
  -- the server before the keystrokes that preceded it.
  flags = { debounce_text_changes = 0 },
}

M.config = vim.deepcopy(defaults)
local clients = {} -- root -> client id (Neovim < 0.11)

local function has_new_api()
  return vim.lsp.config ~= nil and vim.lsp.enable ~= nil
end

local function find_root(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ';')
    if found == '' then
      found = vim.fn.findfile(marker, dir .. ';')
    end
    if found ~= '' then
      return vim.fn.fnamemodify(vim.fn.fnamemodify(found, ':p'):gsub('/$', ''), ':h')
    end
  end
  return dir
end

local function wanted(bufnr)
  if vim.api.nvim_buf_get_option(bufnr, 'buftype') ~= '' then
    return false
  end
  if vim.api.nvim_buf_get_name(bufnr) == '' then
    return false
  end
  local filetypes = M.config.filetypes
  if filetypes == nil then
    return true
  end
  return vim.tbl_contains(filetypes, vim.api.nvim_buf_get_option(bufnr, 'filetype'))
end

local function attach(bufnr)
  if not wanted(bufnr) then
    return
  end
  local root = find_root(vim.api.nvim_buf_get_name(bufnr))
  local id = clients[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if client == nil or client.is_stopped() then
    id = vim.lsp.start_client({
      name = M.config.name,
      cmd = M.config.cmd,
      root_dir = root,
      workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
      flags = M.config.flags,
      on_exit = function()
        clients[root] = nil
      end,
    })
    if id == nil then
      return
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

--- Start the server for the buffers of each workspace.
function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  if has_new_api() then
    vim.lsp.config(M.config.name, {
      cmd = M.config.cmd,
      filetypes = M.config.filetypes,
      root_markers = M.config.root_markers,
      flags = M.config.flags,
    })
    vim.lsp.enable(M.config.name)
    return
  end
  local group = vim.api.nvim_create_augroup('agent_capture', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'FileType' }, {
    group = group,
    callback = function(args)
      attach(args.buf)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) then
      attach(bufnr)
    end
  end
end

--- The agent-capture client attached to a buffer (nil if none).
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local found
  if vim.lsp.get_clients then
    found = vim.lsp.get_clients({ bufnr = bufnr, name = M.config.name })
  else
    found = vim.tbl_filter(function(c)
      return c.name == M.config.name
    end, vim.lsp.buf_get_clients(bufnr))
  end
  return found[1]
end

-- LSP position of a 0-based (row, byte column) in the client's position encoding.
local function position(bufnr, row, col, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  col = math.min(col, #line)
  if encoding == 'utf-8' then
    return { line = row, character = col }
  end
  local utf32, utf16 = vim.str_utfindex(line, col)
  return { line = row, character = encoding == 'utf-32' and utf32 or utf16 }
end

local function end_of(start_row, start_col, lines)
  if #lines == 1 then
    return start_row, start_col + #lines[1]
  end
  return start_row + #lines - 1, #lines[#lines]
end

--- Apply an agent's edit to a buffer and report it: replaces the text between the 0-based
--- (row, byte column) positions by `new_text`, then sends capture/proposal.
--- meta: { agent, model, sessionId, turnId, tool, id, prompt }
function M.apply_agent_edit(bufnr, start_row, start_col, end_row, end_col, new_text, meta)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local old = vim.api.nvim_buf_get_text(bufnr, start_row, start_col, end_row, end_col, {})
  local lines = vim.split(new_text, '\n', true)
  vim.api.nvim_buf_set_text(bufnr, start_row, start_col, end_row, end_col, lines)
  local new_end_row, new_end_col = end_of(start_row, start_col, lines)
  return M.report_proposal(bufnr, {
    start_row = start_row,
    start_col = start_col,
    end_row = new_end_row,
    end_col = new_end_col,
    old_text = table.concat(old, '\n'),
    new_text = new_text,
  }, meta)
end

--- Report an edit already in the buffer (state applied) or only shown (meta.state = 'shown').
--- edit: { start_row, start_col, end_row, end_col, old_text, new_text } (0-based, bytes)
function M.report_proposal(bufnr, edit, meta)
  local client = M.client(bufnr)
  if client == nil then
    return false
  end
  local encoding = client.offset_encoding or 'utf-16'
  local params = vim.tbl_extend('keep', {
    uri = vim.uri_from_bufnr(bufnr),
    range = {
      ['start'] = position(bufnr, edit.start_row, edit.start_col, encoding),
      ['end'] = position(bufnr, edit.end_row, edit.end_col, encoding),
    },
    oldText = edit.old_text,
    newText = edit.new_text,
  }, meta or {})
  return client.notify('capture/proposal', params)
end

--- Undo the last change in the buffer and tell the server it was an undo (editors other
--- than VS Code cannot say so on their own).
function M.undo(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  vim.api.nvim_buf_call(bufnr, function()
    vim.cmd('undo')
  end)
  local client = M.client(bufnr)
  return client ~= nil
    and client.notify('capture/undo', {
      uri = vim.uri_from_bufnr(bufnr),
      version = vim.lsp.util.buf_versions[bufnr],
      reason = 'undo',
    })
end

--- Accept or reject a shown proposal (its meta.id given when it was reported).
function M.decide(bufnr, id, accepted, decided_by)
  local client = M.client(bufnr)
  return client ~= nil
    and client.notify('capture/decision', { id = id, accepted = accepted, decidedBy = decided_by or 'user' })
end

--- Report a test run: { command, exitCode, passed, failed, errors, skipped, failingIds, ... }.
function M.test_run(bufnr, run)
  local client = M.client(bufnr)
  return client ~= nil and client.notify('capture/testRun', run)
end

--- Today's figures (capture.stats); calls `callback(result)` when they arrive.
function M.stats(bufnr, callback)
  local client = M.client(bufnr)
  if client == nil then
    return false
  end
  return client.request('workspace/executeCommand', { command = 'capture.stats' }, function(err, result)
    callback(result, err)
  end, bufnr)
end

return M

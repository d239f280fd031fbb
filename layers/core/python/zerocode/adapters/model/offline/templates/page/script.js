let clicks = 0;
document.getElementById('action').addEventListener('click', () => {
  clicks += 1;
  document.getElementById('status').textContent =
    `Clicked ${clicks} time${clicks === 1 ? '' : 's'}.`;
});

(function(){var box=document.getElementById('lightbox'),big=box.querySelector('img');
document.addEventListener('click',function(e){var t=e.target;
if(t.matches&&t.matches('.figs img,.md img')){big.src=t.src;big.alt=t.alt;box.hidden=false;}
else if(t.closest&&t.closest('#lightbox')){box.hidden=true;big.src='';}});
document.addEventListener('keydown',function(e){if(e.key==='Escape'){box.hidden=true;big.src='';}});
})();
